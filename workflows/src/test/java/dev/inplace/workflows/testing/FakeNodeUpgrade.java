package dev.inplace.workflows.testing;

import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.failure.UpgradeFailures;
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
 */
public class FakeNodeUpgrade implements NodeUpgradeWorkflow {
  private final ChildScript script;
  private NodeProgress progress = new NodeProgress("", "", NodePhase.PENDING, null, List.of(), "");

  public FakeNodeUpgrade(ChildScript script) {
    this.script = script;
  }

  @Override
  public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
    String machine = request.node().machineName();
    String node = request.node().nodeName();
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
