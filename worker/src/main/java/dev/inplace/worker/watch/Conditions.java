package dev.inplace.worker.watch;

import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradeStatus;
import java.util.ArrayList;
import java.util.List;

/**
 * Sets conditions the way metav1 conditions are kept: one per type, and the transition time moves
 * only when the status (True/False) changes.
 */
final class Conditions {
  /** The order conditions are listed in. */
  private static final List<String> ORDER =
      List.of(
          UpgradeCondition.READY,
          UpgradeCondition.PROGRESSING,
          UpgradeCondition.FAILED,
          UpgradeCondition.PAUSED,
          UpgradeCondition.SPEC_ACCEPTED);

  private Conditions() {}

  /**
   * Puts {@code type} into {@code next}, keeping the transition time of {@code previous}'s
   * condition of that type when its status is unchanged.
   */
  static void set(
      UpgradeStatus next,
      UpgradeStatus previous,
      String type,
      boolean value,
      String reason,
      String message,
      long generation,
      String now) {
    UpgradeCondition condition =
        new UpgradeCondition(type, value, reason, Texts.clip(message)).setObservedGeneration(generation);
    String before =
        previous == null
            ? null
            : previous.condition(type).filter(c -> c.getStatus().equals(condition.getStatus()))
                .map(UpgradeCondition::getLastTransitionTime)
                .orElse(null);
    condition.setLastTransitionTime(before == null ? now : before);
    List<UpgradeCondition> list = new ArrayList<>(next.getConditions() == null ? List.of() : next.getConditions());
    list.removeIf(c -> c.getType().equals(type));
    list.add(condition);
    list.sort((a, b) -> Integer.compare(rank(a.getType()), rank(b.getType())));
    next.setConditions(list);
  }

  private static int rank(String type) {
    int i = ORDER.indexOf(type);
    return i < 0 ? ORDER.size() : i;
  }
}
