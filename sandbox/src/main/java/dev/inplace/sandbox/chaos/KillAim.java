package dev.inplace.sandbox.chaos;

import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Which activity in flight an aimed kill takes (docs/reliability.md, "Kills"): the kills are spread
 * over the kinds issue 10 names ({@link KillKind#NAMED}) rather than spent where the runs happen to
 * be when the killer looks, which at small estates is the control plane's preflight.
 *
 * <ol>
 *   <li>an attempt of a kind the campaign wants and has not hit yet, when one is in flight;
 *   <li>otherwise nothing while the kill is still patient: the killer looks again, up to {@link
 *       #PATIENCE_MILLIS};
 *   <li>then an attempt of any named kind, else any attempt.
 * </ol>
 *
 * Each choice among equals is drawn from the campaign's seeded random sequence.
 */
final class KillAim {
  /** How long an aimed kill waits for an activity of a kind not hit yet before it takes what is in flight. */
  static final long PATIENCE_MILLIS = 15_000;

  private KillAim() {}

  /**
   * @param candidates attempts in flight on live workers, in the order the server listed them
   * @param wanted named kinds the campaign can still reach and has not hit yet
   * @param patienceOver the kill has waited long enough (or must not wait) for a wanted kind
   */
  static Optional<ActivityWatch.InFlight> choose(List<ActivityWatch.InFlight> candidates, Set<KillKind> wanted,
      boolean patienceOver, Random random) {
    Optional<ActivityWatch.InFlight> fresh = pick(candidates, a -> wanted.contains(a.kind()), random);
    if (fresh.isPresent() || (!patienceOver && !wanted.isEmpty())) {
      return fresh;
    }
    Optional<ActivityWatch.InFlight> named = pick(candidates, a -> a.kind().named(), random);
    return named.isPresent() ? named : pick(candidates, a -> true, random);
  }

  private static Optional<ActivityWatch.InFlight> pick(List<ActivityWatch.InFlight> candidates,
      Predicate<ActivityWatch.InFlight> fits, Random random) {
    List<ActivityWatch.InFlight> fitting = candidates.stream().filter(fits).toList();
    return fitting.isEmpty() ? Optional.empty() : Optional.of(fitting.get(random.nextInt(fitting.size())));
  }
}
