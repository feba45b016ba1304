package dev.inplace.worker.observe;

import io.temporal.activity.ActivityExecutionContext;
import io.temporal.common.interceptors.ActivityInboundCallsInterceptor;
import io.temporal.common.interceptors.ActivityInboundCallsInterceptorBase;
import io.temporal.common.interceptors.WorkerInterceptorBase;
import java.util.Map;
import org.slf4j.MDC;

/**
 * Puts the node-upgrade {@code step} an activity performs into the logging context (MDC) for the
 * activity's duration, next to the workflow and run IDs the SDK puts there and the {@code cluster}
 * and {@code node} the activities put there, so every log line of a step says which step it is.
 */
public final class LogContextInterceptor extends WorkerInterceptorBase {
  static final String STEP = "step";

  /** Activity type to the step it belongs to ({@code UpgradeStep} names, lower case). */
  static final Map<String, String> STEPS = Map.ofEntries(
      Map.entry("InspectHost", "preflight"),
      Map.entry("InspectNode", "preflight"),
      Map.entry("VerifyArtifacts", "preflight"),
      Map.entry("StageArtifacts", "stage"),
      Map.entry("CordonNode", "cordon"),
      Map.entry("DrainNode", "drain"),
      Map.entry("BackupBinaries", "backup"),
      Map.entry("InstallArtifacts", "install"),
      Map.entry("RunUpgradeCommand", "upgrade"),
      Map.entry("RestartService", "restart"),
      Map.entry("AwaitNodeVersion", "verify"),
      Map.entry("UncordonNode", "uncordon"),
      Map.entry("RestoreBinaries", "restore"),
      Map.entry("SnapshotEtcd", "snapshot"));

  static String stepOf(String activityType) {
    return STEPS.getOrDefault(activityType, activityType);
  }

  @Override
  public ActivityInboundCallsInterceptor interceptActivity(ActivityInboundCallsInterceptor next) {
    return new ActivityInboundCallsInterceptorBase(next) {
      private String activityType = "";

      @Override
      public void init(ActivityExecutionContext context) {
        // The context is handed here; Activity.getExecutionContext() is not available to interceptors.
        activityType = context.getInfo().getActivityType();
        super.init(context);
      }

      @Override
      public ActivityOutput execute(ActivityInput input) {
        String previous = MDC.get(STEP);
        MDC.put(STEP, stepOf(activityType));
        try {
          return super.execute(input);
        } finally {
          if (previous == null) {
            MDC.remove(STEP);
          } else {
            MDC.put(STEP, previous);
          }
        }
      }
    };
  }
}
