package dev.inplace.workflows.testing;

import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.EndReport;
import dev.inplace.workflows.impl.StagedReport;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.List;

/**
 * A NodeUpgrade child driven by a {@link ChildScript}: takes its scripted time (a durable timer, so
 * time skipping applies), then succeeds or fails the way the real saga does, with an {@code
 * ApplicationFailure} of the scripted type whose details are a {@link NodeFailure}. What the script
 * is asked and told goes through side effects, so a replay of the child neither re-reads nor
 * double-counts.
 *
 * <p>A child asked to wait for its parent's permit ({@code awaitPermit}) first prepares (its
 * scripted preparation time, or a scripted failure before its turn), then waits for the permit, and
 * only then counts as running: {@link ChildScript#maxConcurrent} counts nodes being disrupted. Stood
 * down (cancelled) while it waits, it fails as the real saga does: {@code Cancelled}, nothing changed.
 */
public class FakeNodeUpgrade implements NodeUpgradeWorkflow {
  private final ChildScript script;
  private NodeProgress progress = new NodeProgress("", "", NodePhase.PENDING, null, List.of(), "");
  private boolean permitted;

  public FakeNodeUpgrade(ChildScript script) {
    this.script = script;
  }

  @Override
  public void permit() {
    permitted = true;
  }

  /** Reports its end to the parent's workflow when asked ({@code reportEnd}), as the real saga does. */
  @Override
  public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
    // Read as configured before the run starts, as the other timings are.
    Duration linger = request.reportEnd() ? script.lingerAfterReport() : Duration.ZERO;
    if (linger.isZero()) {
      return EndReport.around(request.node().nodeName(), request.reportEnd(), () -> run(request));
    }
    try {
      NodeUpgradeResult result = EndReport.around(request.node().nodeName(), true, () -> run(request));
      Workflow.sleep(linger);
      return result;
    } catch (ApplicationFailure failure) {
      Workflow.sleep(linger);
      throw failure;
    }
  }

  private NodeUpgradeResult run(NodeUpgradeRequest request) {
    String machine = request.node().machineName();
    String node = request.node().nodeName();
    if (request.awaitPermit()) {
      prepare(machine, node, request.reportStaged());
    } else if (request.reportStaged()) {
      stage(machine, node);
    }
    long started = Workflow.currentTimeMillis();
    ChildScript.Outcome outcome =
        Workflow.sideEffect(ChildScript.Outcome.class, () -> {
          ChildScript.Outcome o = script.begin(node);
          script.started(node, started);
          return o;
        });
    progress = new NodeProgress(machine, node, NodePhase.UPGRADING, null, List.of(), "upgrading");
    try {
      Workflow.sleep(Duration.ofSeconds(outcome.seconds()));
    } catch (CanceledFailure e) {
      record(node, false);
      throw e;
    }
    boolean upgraded = outcome.reason() == null;
    record(node, upgraded);
    if (!upgraded) {
      String text = outcome.failedStep().cliName() + " failed: injected " + outcome.reason();
      progress = new NodeProgress(machine, node, outcome.phase(), outcome.failedStep(), List.of(), text);
      throw UpgradeFailures.nonRetryable(
          outcome.reason(),
          text,
          new NodeFailure(machine, node, outcome.failedStep(), outcome.reason(), text, outcome.phase(), Fixtures.FROM, List.of()));
    }
    progress = new NodeProgress(machine, node, NodePhase.UPGRADED, null, List.of(), "upgraded");
    return new NodeUpgradeResult(machine, node, Fixtures.FROM, request.targetVersion(), false, List.of());
  }

  /**
   * A child that reports staging (a node started with its turn by a parent preparing ahead) takes
   * its scripted staging time, then tells its parent, as the real saga does after its stage step.
   */
  private void stage(String machine, String node) {
    long now = Workflow.currentTimeMillis();
    ChildScript.Outcome staging = Workflow.sideEffect(ChildScript.Outcome.class, () -> script.stage(node, now));
    Workflow.sleep(Duration.ofSeconds(staging.seconds()));
    if (staging.reason() != null) {
      throw failedBeforeChange(machine, node, staging);
    }
    StagedReport.toParent(node);
  }

  /** A scripted failure before anything changed on the node (preflight, stage), as the real saga reports it. */
  private RuntimeException failedBeforeChange(String machine, String node, ChildScript.Outcome outcome) {
    String text = outcome.failedStep().cliName() + " failed: injected " + outcome.reason()
        + "; nothing was changed on the node";
    progress = new NodeProgress(machine, node, NodePhase.FAILED, outcome.failedStep(), List.of(), text);
    return UpgradeFailures.nonRetryable(outcome.reason(), text,
        new NodeFailure(machine, node, outcome.failedStep(), outcome.reason(), text, NodePhase.FAILED,
            Fixtures.FROM, List.of()));
  }

  /**
   * Preparation: its scripted time or failure, then (asked to report staging) the report to its
   * parent, then the wait for the permit, as the real saga stages, reports and waits.
   */
  private void prepare(String machine, String node, boolean reportStaged) {
    long now = Workflow.currentTimeMillis();
    ChildScript.Outcome preparation =
        Workflow.sideEffect(ChildScript.Outcome.class, () -> script.prepare(node, now));
    progress = new NodeProgress(machine, node, NodePhase.UPGRADING, UpgradeStep.STAGE, List.of(), "preparing");
    try {
      Workflow.sleep(Duration.ofSeconds(preparation.seconds()));
      if (preparation.reason() != null) {
        throw failedBeforeChange(machine, node, preparation);
      }
      progress = new NodeProgress(machine, node, NodePhase.UPGRADING, UpgradeStep.STAGE, List.of(), "prepared");
      if (reportStaged) {
        long staged = Workflow.currentTimeMillis();
        Workflow.sideEffect(Boolean.class, () -> {
          script.preparedAndStaged(node, staged);
          return true;
        });
        StagedReport.toParent(node);
      }
      Workflow.await(() -> permitted);
    } catch (CanceledFailure e) {
      Workflow.sideEffect(Boolean.class, () -> {
        script.stoodDown(node);
        return true;
      });
      String text = "stood down before its turn: nothing was changed on the node";
      progress = new NodeProgress(machine, node, NodePhase.FAILED, null, List.of(), text);
      throw UpgradeFailures.nonRetryable(UpgradeFailures.CANCELLED, text,
          new NodeFailure(machine, node, null, UpgradeFailures.CANCELLED, text, NodePhase.FAILED, Fixtures.FROM, List.of()));
    }
  }

  private void record(String node, boolean upgraded) {
    long now = Workflow.currentTimeMillis();
    Workflow.sideEffect(Boolean.class, () -> {
      script.end(node, now, upgraded);
      return upgraded;
    });
  }

  @Override
  public NodeProgress progress() {
    return progress;
  }
}
