package dev.inplace.worker.observe;

import com.uber.m3.tally.Scope;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.UpgradeStep;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.temporal.common.interceptors.WorkerInterceptorBase;
import io.temporal.common.interceptors.WorkflowInboundCallsInterceptor;
import io.temporal.common.interceptors.WorkflowInboundCallsInterceptorBase;
import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Workflow;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * inplace's run metrics, taken around every workflow execution on this worker without touching
 * workflow code (so no history changes and no {@code Workflow.getVersion}):
 *
 * <ul>
 *   <li>{@code inplace_node_upgrades_total{distribution,role,result}}, {@code
 *       inplace_node_step_seconds{step}} and {@code inplace_drain_seconds} when a NodeUpgrade run
 *       ends. They go through {@link Workflow#getMetricsScope()}, which records nothing while a run
 *       is replayed (after a cache eviction, a worker restart, or for a query on a closed run), so
 *       a run is counted once. Durations are workflow time from the run's own step records.
 *   <li>{@code inplace_runs_in_flight{kind}}: runs of each kind this worker holds in memory. An
 *       execution counts while its method runs; eviction and continue-as-new end it (finally), and a
 *       replayed run counts again only because the evicted instance was subtracted.
 * </ul>
 */
public final class RunMetricsInterceptor extends WorkerInterceptorBase {
  static final String NODE_UPGRADES = "inplace_node_upgrades";
  static final String NODE_STEP = "inplace_node_step";
  static final String DRAIN = "inplace_drain";
  static final String RUNS_IN_FLIGHT = "inplace_runs_in_flight";

  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
  private final MeterRegistry registry;

  public RunMetricsInterceptor(MeterRegistry registry) {
    this.registry = registry;
    for (String kind : new String[] {"node", "control_plane", "workers"}) {
      inFlight(kind);
    }
  }

  private AtomicInteger inFlight(String kind) {
    return inFlight.computeIfAbsent(kind, k -> {
      AtomicInteger count = new AtomicInteger();
      Gauge.builder(RUNS_IN_FLIGHT, count, AtomicInteger::get)
          .description("inplace runs in flight on this worker, by kind")
          .tag("kind", k)
          .register(registry);
      return count;
    });
  }

  static String kind(String workflowType) {
    return switch (workflowType) {
      case "NodeUpgradeWorkflow" -> "node";
      case "ControlPlaneUpgradeWorkflow" -> "control_plane";
      case "WorkersUpgradeWorkflow" -> "workers";
      default -> workflowType;
    };
  }

  @Override
  public WorkflowInboundCallsInterceptor interceptWorkflow(WorkflowInboundCallsInterceptor next) {
    return new WorkflowInboundCallsInterceptorBase(next) {
      @Override
      public WorkflowOutput execute(WorkflowInput input) {
        String kind = kind(Workflow.getInfo().getWorkflowType());
        AtomicInteger running = inFlight(kind);
        running.incrementAndGet();
        try {
          WorkflowOutput output = super.execute(input);
          if (output.getResult() instanceof NodeUpgradeResult result) {
            record(input, NodeOutcome.of(result));
          }
          return output;
        } catch (ApplicationFailure failure) {
          if (kind.equals("node")) {
            record(input, NodeOutcome.of(details(failure)));
          }
          throw failure;
        } finally {
          running.decrementAndGet();
        }
      }
    };
  }

  private static Optional<NodeFailure> details(ApplicationFailure failure) {
    try {
      return Optional.ofNullable(failure.getDetails().get(NodeFailure.class));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  private static void record(WorkflowInboundCallsInterceptor.WorkflowInput input, NodeOutcome outcome) {
    Object[] args = input.getArguments();
    if (args.length == 0 || !(args[0] instanceof NodeUpgradeRequest request)) {
      return;
    }
    // Replay-safe: this scope drops everything recorded while the run is replaying.
    Scope scope = Workflow.getMetricsScope();
    scope.tagged(Map.of(
            "distribution", NodeOutcome.label(request.distribution()),
            "role", NodeOutcome.label(request.node().role()),
            "result", outcome.result()))
        .counter(NODE_UPGRADES)
        .inc(1);
    for (StepRecord step : outcome.steps()) {
      NodeOutcome.duration(step).ifPresent(d -> {
        com.uber.m3.util.Duration duration = com.uber.m3.util.Duration.ofMillis(d.toMillis());
        scope.tagged(Map.of("step", NodeOutcome.label(step.step()))).timer(NODE_STEP).record(duration);
        if (step.step() == UpgradeStep.DRAIN) {
          scope.timer(DRAIN).record(duration);
        }
      });
    }
  }
}
