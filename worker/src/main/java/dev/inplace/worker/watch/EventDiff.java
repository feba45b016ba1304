package dev.inplace.worker.watch;

import dev.inplace.worker.crd.NodeRecord;
import dev.inplace.worker.crd.RunRecord;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Kubernetes Events a status change is worth: nodes that started, finished, failed or were
 * rolled back, and the run halting, pausing, resuming, ending or refusing a spec change. Derived
 * from the stored status before and after a write, so a restarted watcher does not repeat them.
 */
final class EventDiff {
  static final String NORMAL = "Normal";
  static final String WARNING = "Warning";

  record Event(String type, String reason, String message) {}

  private EventDiff() {}

  static List<Event> between(UpgradeStatus before, UpgradeStatus after) {
    List<Event> events = new ArrayList<>();
    nodes(before, after, events);
    phase(before, after, events);
    boolean acceptedBefore = before == null || before.condition(UpgradeCondition.SPEC_ACCEPTED).map(UpgradeCondition::isTrue).orElse(true);
    boolean acceptedAfter = after.condition(UpgradeCondition.SPEC_ACCEPTED).map(UpgradeCondition::isTrue).orElse(true);
    if (acceptedBefore && !acceptedAfter) {
      events.add(new Event(WARNING, Reasons.SPEC_CHANGE_REFUSED,
          after.condition(UpgradeCondition.SPEC_ACCEPTED).map(UpgradeCondition::getMessage).orElse("")));
    }
    return events;
  }

  private static void nodes(UpgradeStatus before, UpgradeStatus after, List<Event> events) {
    Map<String, String> was = new HashMap<>();
    if (before != null && before.getNodes() != null) {
      before.getNodes().forEach(n -> was.put(key(n), n.getPhase()));
    }
    for (NodeRecord n : after.getNodes() == null ? List.<NodeRecord>of() : after.getNodes()) {
      String old = was.get(key(n));
      if (Objects.equals(old, n.getPhase())) {
        continue;
      }
      String who = "node " + n.getNode() + " (Machine " + n.getMachine() + ")";
      String detail = n.getMessage() == null ? "" : ": " + n.getMessage();
      switch (n.getPhase()) {
        case "Upgrading" -> events.add(new Event(NORMAL, Reasons.NODE_STARTED, "upgrade of " + who + " started"));
        case "Upgraded" -> events.add(new Event(NORMAL, Reasons.NODE_UPGRADED, who + " upgraded" + detail));
        case "RollingBack" -> events.add(new Event(WARNING, Reasons.NODE_ROLLING_BACK,
            who + " failed" + step(n) + " and is being rolled back" + reason(n)));
        case "RolledBack" -> events.add(new Event(WARNING, Reasons.NODE_ROLLED_BACK,
            who + " failed" + step(n) + reason(n) + " and was rolled back" + detail));
        case "Failed" -> events.add(new Event(WARNING, Reasons.NODE_FAILED, who + " failed" + step(n) + reason(n) + detail));
        case "RollbackFailed" -> events.add(new Event(WARNING, Reasons.NODE_ROLLBACK_FAILED,
            who + " failed and could not be fully rolled back" + reason(n) + detail));
        case "Skipped" -> events.add(new Event(NORMAL, Reasons.NODE_SKIPPED, who + " skipped" + detail));
        default -> {
          // Pending (again, after a retry): nothing happened yet.
        }
      }
    }
  }

  private static void phase(UpgradeStatus before, UpgradeStatus after, List<Event> events) {
    UpgradePhase old = before == null ? null : before.getPhase();
    UpgradePhase now = after.getPhase();
    if (old == now || now == null) {
      return;
    }
    String message = Objects.requireNonNullElse(after.getMessage(), "");
    switch (now) {
      case RUNNING -> {
        if (old == UpgradePhase.PAUSED) {
          events.add(new Event(NORMAL, Reasons.RESUMED, message));
        } else if (old == UpgradePhase.HALTED) {
          events.add(new Event(NORMAL, Reasons.UPGRADING, message));
        } else {
          events.add(new Event(NORMAL, Reasons.STARTED, "started " + String.join(", ", workflowIds(after))));
        }
      }
      case PAUSED -> events.add(new Event(NORMAL, Reasons.PAUSED, message));
      case HALTED -> events.add(new Event(WARNING, Reasons.HALTED, message + haltedHint(after)));
      case ABORTING -> events.add(new Event(NORMAL, Reasons.ABORTING, message));
      case SUCCEEDED -> events.add(new Event(NORMAL, Reasons.SUCCEEDED, message));
      case ABORTED -> events.add(new Event(NORMAL, Reasons.ABORTED, message));
      case FAILED -> events.add(new Event(WARNING,
          after.condition(UpgradeCondition.FAILED).map(UpgradeCondition::getReason).orElse(Reasons.HALTED), message));
      case PLANNED -> events.add(new Event(NORMAL, Reasons.PLANNED, message));
      case WAITING -> events.add(new Event(NORMAL, Reasons.WAITING_FOR_CONTROL_PLANE, message));
      default -> {
        // Pending: nothing to announce.
      }
    }
  }

  private static String haltedHint(UpgradeStatus after) {
    List<String> ids = workflowIds(after);
    return ids.isEmpty() ? "" : " (temporal workflow update execute --workflow-id " + ids.get(0)
        + " --name retryNode|skipNode --input '\"NODE\"', or --name abort; docs/runbook.md)";
  }

  private static List<String> workflowIds(UpgradeStatus status) {
    return status.getRuns() == null ? List.of() : status.getRuns().stream().map(RunRecord::getWorkflowId).toList();
  }

  private static String key(NodeRecord n) {
    return n.getPool() + "/" + n.getNode();
  }

  private static String step(NodeRecord n) {
    return n.getStep() == null ? "" : " at " + n.getStep();
  }

  private static String reason(NodeRecord n) {
    return n.getReason() == null ? "" : " (" + n.getReason() + ")";
  }
}
