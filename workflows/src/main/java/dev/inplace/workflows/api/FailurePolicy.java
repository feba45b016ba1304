package dev.inplace.workflows.api;

/** What a WorkersUpgrade does when a node fails. */
public enum FailurePolicy {
  /** Default: in-flight nodes finish, no new node starts, the run waits for retryNode/skipNode/abort. */
  HALT,
  /** Keep going while no more than {@code maxFailures} nodes have failed; then halt. */
  CONTINUE
}
