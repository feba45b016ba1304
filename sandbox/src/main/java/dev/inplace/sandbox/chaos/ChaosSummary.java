package dev.inplace.sandbox.chaos;

import java.util.List;
import java.util.Map;

/**
 * The campaign's figures, all read from ground truth (the estate's nodes, hosts and journals, the
 * management API's objects, the Temporal server), never from the product's own report; printed as
 * one JSON line with {@code --json}. {@code violations} names each invariant that did not hold.
 *
 * @param killsMidActivity kills inside an activity by the server's word or the journals' (the union)
 * @param killsInCompensation kills inside a compensation of a failing node, by either
 * @param killsByActivity the activity type each kill landed in (the first the server listed; {@code
 *     (idle)} for none)
 * @param killsByKind each kind the kills landed in, a kill with attempts of two kinds counted under
 *     both ({@link KillKind}; {@code idle} for none)
 * @param killAttribution every kill, attributed by the server and by the journals
 * @param temporal the Temporal server the stack ran ({@code test-server} or {@code dev-server})
 * @param temporalKills SIGKILLs of the Temporal server after which it served again
 * @param temporalKillLog each of them ({@code --kill-temporal})
 */
public record ChaosSummary(
    long seed,
    int nodes,
    int kills,
    int killsMidActivity,
    int killsInCompensation,
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
    Map<String, Integer> killsByKind,
    List<KillReport> killAttribution,
    String temporal,
    int temporalKills,
    List<TemporalKiller.ServerKill> temporalKillLog,
    List<String> violations) {

  public boolean passed() {
    return violations.isEmpty();
  }
}
