package dev.inplace.workflows.impl;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.workflow.Workflow;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The operator's controls of a parent run (the UpgradeControls Updates and their validators): each
 * applies a {@link NodeBook} or {@link RunRules} change and wakes the node loop. The workflow
 * implementations delegate their Update methods here.
 */
final class OperatorControls {
  private static final Logger log = Workflow.getLogger(OperatorControls.class);

  private final String kind;
  private final NodeBook book;
  private final RunRules rules;
  private final NodeThreads threads;

  OperatorControls(String kind, NodeBook book, RunRules rules, NodeThreads threads) {
    this.kind = kind;
    this.book = book;
    this.rules = rules;
    this.threads = threads;
  }

  String pause() {
    return control(book::checkPause, book::pause);
  }

  void validatePause() {
    book.checkPause();
  }

  String resume() {
    return control(book::checkResume, book::resume);
  }

  void validateResume() {
    book.checkResume();
  }

  String abort() {
    return control(book::checkAbort, book::abort);
  }

  void validateAbort() {
    book.checkAbort();
  }

  String setMaxUnavailable(String value) {
    return control(() -> rules.checkMaxUnavailable(value), () -> rules.applyMaxUnavailable(value));
  }

  void validateSetMaxUnavailable(String value) {
    rules.checkMaxUnavailable(value);
  }

  String retryNode(String node) {
    return control(() -> book.checkRetry(node), () -> book.retry(node));
  }

  void validateRetryNode(String node) {
    book.checkRetry(node);
  }

  String skipNode(String node) {
    return control(() -> book.checkSkip(node), () -> book.skip(node));
  }

  void validateSkipNode(String node) {
    book.checkSkip(node);
  }

  /**
   * Applies a control. The validator has already accepted it; the check is repeated because state may
   * have moved since, and a refusal here must fail only the update (an ApplicationFailure), never
   * the workflow task.
   */
  private String control(Runnable check, Supplier<String> action) {
    try {
      check.run();
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
    String result = action.get();
    log.info("{} control: {}", kind, result);
    threads.wake();
    return result;
  }
}
