package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.HostActivities.UpgradeCommandResult;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.TemporalFailure;
import io.temporal.failure.TimeoutFailure;
import java.util.ArrayList;
import java.util.List;

/** How a NodeUpgrade step's outcome reads in its step record: results and failures, as text. */
final class NodeStepResults {
  private NodeStepResults() {}

  /** The vocabulary type of a step's failure; a timeout or cancellation has its own. */
  static String typeOf(TemporalFailure failure) {
    Throwable cause = failure instanceof ActivityFailure ? failure.getCause() : failure;
    if (cause instanceof ApplicationFailure app) {
      return app.getType();
    }
    if (cause instanceof TimeoutFailure) {
      return UpgradeFailures.STEP_TIMED_OUT;
    }
    if (cause instanceof CanceledFailure) {
      return UpgradeFailures.CANCELLED;
    }
    return UpgradeFailures.REMOTE_COMMAND_FAILED;
  }

  /** What went wrong, for people: the activity's own message rather than Temporal's wrapper. */
  static String describe(TemporalFailure failure) {
    Throwable cause = failure instanceof ActivityFailure ? failure.getCause() : failure;
    if (cause instanceof ApplicationFailure app) {
      return app.getOriginalMessage();
    }
    if (cause instanceof TimeoutFailure timeout) {
      return "timed out (" + timeout.getTimeoutType() + ")";
    }
    return cause == null ? failure.getMessage() : cause.getMessage();
  }

  static String stage(StageResult r) {
    return r.uploaded().isEmpty()
        ? "already staged: " + String.join(", ", r.alreadyPresent())
        : "uploaded " + String.join(", ", r.uploaded()) + " (" + r.bytesSent() / (1024 * 1024) + " MiB)";
  }

  static String upgradeCommand(UpgradeCommandResult r) {
    if (r.alreadyUpgraded()) {
      return "already upgraded; " + r.command() + " not needed";
    }
    return r.command() + (r.backupDir() == null || r.backupDir().isEmpty()
        ? "" : "; kubeadm kept the previous manifests in " + r.backupDir());
  }

  static String drain(DrainResult r) {
    return "evicted " + r.evicted() + ", deleted " + r.deleted() + ", skipped "
        + (r.skippedDaemonSet() + r.skippedMirror()) + " DaemonSet/mirror pods in " + r.waitedSeconds() + "s";
  }

  static String uncordon(UncordonResult r) {
    return r.uncordoned() ? "uncordoned" : "left as is: " + r.reason();
  }

  static String joined(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return String.join(", ", all);
  }
}
