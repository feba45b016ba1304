package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.worker;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.util.List;
import java.util.Set;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class NodeBookTest {
  private final NodeBook book = new NodeBook();

  NodeBookTest() {
    book.load(workers("w", 4, FROM), List.of(), Set.of());
  }

  private void fail(String node) {
    book.failed(node, 20, NodePhase.ROLLED_BACK, UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, "verify failed");
  }

  @Test
  void startsNodesInMachineOrder() {
    assertEquals("w-1", book.start(1, "id-1").nodeName());
    assertEquals("w-2", book.start(2, "id-2").nodeName());
    assertEquals(List.of("w-1", "w-2"), book.inFlight());
    assertEquals(2, book.pending());
  }

  @Test
  void haltPolicyHaltsOnTheFirstFailureContinueOnlyBeyondMaxFailures() {
    book.start(1, "id-1");
    fail("w-1");
    assertTrue(book.halted(FailurePolicy.HALT, 0));
    assertFalse(book.halted(FailurePolicy.CONTINUE, 1));
    book.start(2, "id-2");
    fail("w-2");
    assertTrue(book.halted(FailurePolicy.CONTINUE, 1));
  }

  @Test
  void aHaltedRunIsNeverDoneButAContinuedOneIsOnceEveryNodeIsResolved() {
    for (int i = 1; i <= 4; i++) {
      book.start(i, "id-" + i);
    }
    fail("w-1");
    for (int i = 2; i <= 4; i++) {
      book.upgraded("w-" + i, 30, "upgraded");
    }
    assertFalse(book.done(FailurePolicy.HALT, 0));
    assertTrue(book.done(FailurePolicy.CONTINUE, 1));
  }

  @Test
  void retryPutsTheNodeFirstInTheQueue() {
    book.start(1, "id-1");
    fail("w-1");

    String answer = book.retry("w-1");

    assertTrue(answer.contains("w-1 queued for retry"), answer);
    assertEquals(Optional.of("w-1"), book.nextPending());
    assertEquals(NodePhase.PENDING, book.status("w-1").phase());
    assertEquals(0, book.failed());
  }

  @Test
  void skipResolvesAFailedOrPendingNode() {
    book.start(1, "id-1");
    fail("w-1");
    book.skip("w-1");
    book.skip("edge-1-w-4");

    assertEquals(2, book.skipped());
    assertEquals(0, book.failed());
    assertEquals(List.of("w-2", "w-3"), List.of(book.start(2, "a").nodeName(), book.start(3, "b").nodeName()));
    assertTrue(book.status("w-1").message().contains("after: verify failed"), book.status("w-1").message());
  }

  @Test
  void controlsAreRefusedWithAReason() {
    book.start(1, "id-1");
    refused(book::checkResume, "not paused");
    book.pause();
    refused(book::checkPause, "already paused");
    refused(() -> book.checkRetry("w-1"), "w-1 is UPGRADING");
    refused(() -> book.checkRetry("w-9"), "unknown node 'w-9'; this run's nodes: w-1, w-2, w-3, w-4");
    refused(() -> book.checkSkip("w-1"), "in flight");
    book.upgraded("w-1", 5, "upgraded");
    refused(() -> book.checkSkip("w-1"), "already upgraded");
    book.abort();
    refused(book::checkAbort, "already aborting");
    refused(() -> book.checkSkip("w-2"), "aborting");
    book.finish();
    refused(book::checkAbort, "already finished");
  }

  @Test
  void aCarriedBookRestoresStatusesAndQueueAndTheLastFinish() {
    book.start(1, "id-1");
    book.upgraded("w-1", 50, "upgraded");
    book.start(2, "id-2");
    fail("w-2");
    NodeBook next = new NodeBook();

    next.load(book.machines(), book.statuses(), Set.of());

    assertEquals(book.statuses(), next.statuses());
    assertEquals(Optional.of("w-3"), next.nextPending());
    assertEquals(2, next.pending());
    assertEquals(50, next.lastFinishedMillis());
  }

  @Test
  void aNodeAlreadyAtTheTargetCountsAsUpgradedAndIsNotQueued() {
    NodeBook fresh = new NodeBook();
    fresh.load(List.of(worker("w", 1, TO), worker("w", 2, FROM)), List.of(), Set.of());

    fresh.alreadyAtTarget("w-1", TO);

    NodeStatus done = fresh.status("w-1");
    assertEquals(NodePhase.UPGRADED, done.phase());
    assertEquals(Optional.of("w-2"), fresh.nextPending());
    assertEquals(1, fresh.upgraded());
    assertEquals(0, fresh.lastFinishedMillis(), "no soak after a node that did not run");
  }

  @Test
  void aNodeOfTwoMachinesIsRefused() {
    NodeBook twice = new NodeBook();
    assertThrows(IllegalArgumentException.class, () -> twice.load(List.of(worker("w", 1, FROM), worker("w", 1, FROM)), List.of(), Set.of()));
  }

  private static void refused(Executable check, String text) {
    RuntimeException e = assertThrows(RuntimeException.class, check);
    assertTrue(e instanceof IllegalArgumentException || e instanceof IllegalStateException, e.toString());
    assertTrue(e.getMessage().contains(text), e.getMessage());
  }
}
