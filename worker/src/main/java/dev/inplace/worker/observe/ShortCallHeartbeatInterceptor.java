package dev.inplace.worker.observe;

import dev.inplace.activities.support.StepHeartbeat;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.NodeActivities;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.activity.ActivityMethod;
import io.temporal.common.interceptors.ActivityInboundCallsInterceptor;
import io.temporal.common.interceptors.ActivityInboundCallsInterceptorBase;
import io.temporal.common.interceptors.WorkerInterceptorBase;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Heartbeats the short Kubernetes and Cluster API calls (inspect, cordon, uncordon, the CAPI marks
 * and bookkeeping) from a side thread while they run, so they can have a heartbeat timeout of
 * seconds: a worker killed mid-call is noticed within it and the call retried, instead of after its
 * start-to-close timeout (found by the chaos campaign, docs/reliability.md). The long calls that
 * heartbeat their own progress (drain, the waits for a node or the control plane) are left alone,
 * so their details are never overwritten: they beat from their own side thread with their latest
 * progress (NodeActivitiesImpl).
 */
public final class ShortCallHeartbeatInterceptor extends WorkerInterceptorBase {
  private static final Duration INTERVAL = Duration.ofSeconds(2);

  /** Activities that heartbeat their own progress. */
  static final Set<String> SELF_BEATING = Set.of("DrainNode", "AwaitNodeVersion", "AwaitControlPlaneHealthy");

  /** The activity types of the Kubernetes and Cluster API calls that do not heartbeat themselves. */
  static final Set<String> SHORT_CALLS = shortCalls();

  private static Set<String> shortCalls() {
    Set<String> types = new HashSet<>();
    for (Class<?> api : List.of(NodeActivities.class, ClusterApiActivities.class)) {
      for (Method m : api.getMethods()) {
        ActivityMethod annotation = m.getAnnotation(ActivityMethod.class);
        if (annotation == null) {
          continue;
        }
        String type = annotation.name().isEmpty()
            ? Character.toUpperCase(m.getName().charAt(0)) + m.getName().substring(1)
            : annotation.name();
        if (!SELF_BEATING.contains(type)) {
          types.add(type);
        }
      }
    }
    return Set.copyOf(types);
  }

  @Override
  public ActivityInboundCallsInterceptor interceptActivity(ActivityInboundCallsInterceptor next) {
    return new ActivityInboundCallsInterceptorBase(next) {
      private ActivityExecutionContext context;

      @Override
      public void init(ActivityExecutionContext context) {
        this.context = context;
        super.init(context);
      }

      @Override
      public ActivityOutput execute(ActivityInput input) {
        String type = context.getInfo().getActivityType();
        if (!SHORT_CALLS.contains(type) || context.getInfo().getHeartbeatTimeout() == null
            || context.getInfo().getHeartbeatTimeout().isZero()) {
          return super.execute(input);
        }
        try (StepHeartbeat beating = StepHeartbeat.start(context, INTERVAL, () -> type)) {
          return super.execute(input);
        }
      }
    };
  }
}
