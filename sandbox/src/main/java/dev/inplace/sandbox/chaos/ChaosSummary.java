package dev.inplace.sandbox.chaos;

import java.util.List;
import java.util.Map;

/**
 * The campaign's figures, all read from ground truth (the estate's nodes, hosts and journals, the
 * management API's objects, the Temporal server), never from the product's own report; printed as
 * one JSON line with {@code --json}. {@code violations} names each invariant that did not hold.
 */
public record ChaosSummary(
    long seed,
    int nodes,
    int kills,
    int killsMidActivity,
    long sshDropped,
    long sshHung,
    int upgraded,
    int rolledBack,
    int leftCordoned,
    int marksLeft,
    int duplicateDestructive,
    int wrongDigestStarts,
    int stuckRuns,
    double wallSeconds,
    int killsRequested,
    int maxHistoryEvents,
    Map<String, Integer> killsByActivity,
    Map<String, Integer> killsByRestart,
    List<String> violations) {

  public boolean passed() {
    return violations.isEmpty();
  }
}
