package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.MaxUnavailable;

/**
 * A worker pool's node-loop rules: the window from maxUnavailable (changeable by the operator), the
 * failure policy and the history limit the run continues as new at.
 */
final class PoolRules implements RunRules {
  private final NodeBook book;
  private MaxUnavailable maxUnavailable = MaxUnavailable.parse("1");
  private FailurePolicy policy = FailurePolicy.HALT;
  private int maxFailures;
  private long historyLimit;

  PoolRules(NodeBook book) {
    this.book = book;
  }

  void set(String maxUnavailable, FailurePolicy policy, int maxFailures, long historyLimit) {
    this.maxUnavailable = MaxUnavailable.parse(maxUnavailable);
    this.policy = policy;
    this.maxFailures = maxFailures;
    this.historyLimit = historyLimit;
  }

  @Override
  public int window() {
    return maxUnavailable.windowFor(book.total());
  }

  @Override
  public String maxUnavailable() {
    return maxUnavailable.text();
  }

  @Override
  public void checkMaxUnavailable(String value) {
    book.checkRunning();
    MaxUnavailable.parse(value);
  }

  @Override
  public String applyMaxUnavailable(String value) {
    maxUnavailable = MaxUnavailable.parse(value);
    return "maxUnavailable " + maxUnavailable.text() + ": up to " + window() + " node(s) at once";
  }

  @Override
  public FailurePolicy failurePolicy() {
    return policy;
  }

  @Override
  public int maxFailures() {
    return maxFailures;
  }

  @Override
  public long historyLimit() {
    return historyLimit;
  }
}
