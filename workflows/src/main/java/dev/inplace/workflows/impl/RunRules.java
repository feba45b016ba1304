package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.FailurePolicy;

/**
 * What a kind of parent run decides for its node loop: the window, the failure policy and when its
 * history is long enough to continue as new. The control plane's rules are {@link #oneAtATime()};
 * a worker pool's are {@link PoolRules}.
 */
interface RunRules {

  /** How many nodes may be in flight at once now. */
  int window();

  /** The window as the operator wrote it. */
  String maxUnavailable();

  /** Throws {@link IllegalArgumentException} or {@link IllegalStateException} if the new window is refused. */
  void checkMaxUnavailable(String value);

  String applyMaxUnavailable(String value);

  FailurePolicy failurePolicy();

  int maxFailures();

  /**
   * History events a run may reach before it continues as new; 0 when it never does. A run stops
   * starting nodes early enough for those in flight to finish within it.
   */
  long historyLimit();

  /** The control plane's: one node at a time, halt on any failure, never continue as new. */
  static RunRules oneAtATime() {
    return new RunRules() {
      @Override
      public int window() {
        return 1;
      }

      @Override
      public String maxUnavailable() {
        return "1";
      }

      @Override
      public void checkMaxUnavailable(String value) {
        throw new IllegalStateException("control-plane nodes are upgraded one at a time; maxUnavailable cannot change");
      }

      @Override
      public String applyMaxUnavailable(String value) {
        throw new IllegalStateException("control-plane nodes are upgraded one at a time");
      }

      @Override
      public FailurePolicy failurePolicy() {
        return FailurePolicy.HALT;
      }

      @Override
      public int maxFailures() {
        return 0;
      }

      @Override
      public long historyLimit() {
        return 0;
      }
    };
  }
}
