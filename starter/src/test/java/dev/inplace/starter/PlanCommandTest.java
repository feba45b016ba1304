package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.PlanWorkflow;
import dev.inplace.workflows.api.UpgradePlan;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code inplace plan}: the request it sends the Plan workflow, and how it prints the answer. */
class PlanCommandTest {
  static final List<PlanWorkflow.PlanRequest> requests = new CopyOnWriteArrayList<>();

  /** Stands in for the worker's Plan workflow: records the request, answers a fixed two-wave plan. */
  public static class StandInPlan implements PlanWorkflow {
    @Override
    public UpgradePlan plan(PlanRequest request) {
      requests.add(request);
      boolean refuse = request.cluster().name().equals("refused");
      return new UpgradePlan(request.cluster(), request.template().targetVersion(), request.template().distribution(),
          request.scope(), request.inspectHosts(), "2 to upgrade", null,
          List.of(new UpgradePlan.Wave(1, "control-plane", List.of("cp-1")), new UpgradePlan.Wave(2, "md-a", List.of("w-1"))),
          List.of(new UpgradePlan.PlannedNode(1, 1, "control-plane", "m-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "v1.30.6",
                  UpgradePlan.UPGRADE, List.of(new UpgradePlan.Step("upgrade", "kubeadm upgrade apply", "upgrade-apply", false))),
              new UpgradePlan.PlannedNode(2, 2, "md-a", "m-w-1", "w-1", NodeRole.WORKER, "v1.30.6", UpgradePlan.UPGRADE,
                  List.of(new UpgradePlan.Step("upgrade", "kubeadm upgrade node", "upgrade-worker", false)))),
          refuse ? List.of(new UpgradePlan.Finding(UpgradePlan.Severity.ERROR, "InsufficientDisk", "w-1", "too full"))
              : List.of(new UpgradePlan.Finding(UpgradePlan.Severity.WARNING, "DrainBlocked", null, "apps/db")),
          List.of(new UpgradePlan.Script("upgrade-apply", "upgrade", "bash -s", "#!/bin/bash\nkubeadm upgrade apply\n")));
    }
  }

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      TestWorkflowExtension.newBuilder().registerWorkflowImplementationTypes(StandInPlan.class).build();

  @TempDir Path dir;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int cli(TestWorkflowEnvironment env, Worker worker, String... args) {
    CliContext context = CliContext.of(env.getWorkflowClient(), worker.getTaskQueue(),
        new PrintStream(out, true, StandardCharsets.UTF_8), 20);
    return InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  private String[] args(String cluster, String... more) throws Exception {
    Path catalogue = Files.writeString(dir.resolve("releases.json"), """
        {"releases":[{"version":"v1.31.2","distribution":"KUBEADM","arch":"amd64","artifacts":[
          {"name":"kubeadm","kind":"BINARY","source":"/srv/kubeadm","sha256":"%s","sizeBytes":10,
           "installPath":"/usr/bin/kubeadm","mode":"0755"}]}]}""".formatted("cd".repeat(32)));
    List<String> all = new java.util.ArrayList<>(List.of("plan", "--cluster=fleet/" + cluster, "--version=v1.31.2",
        "--distribution", "kubeadm", "--catalogue=" + catalogue, "--ssh-user=inplace", "--ssh-key-secret=k",
        "--known-hosts-secret=h"));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  @Test
  void planJsonCarriesTheWavesAndScriptsAndTheRequestTheKubeadmLayout(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    int code = cli(env, worker, args("edge-1", "--offline", "--max-unavailable=25%", "--machine-deployment=md-a",
        "--window-start=22:00", "--window-end=04:00", "-o", "json"));
    assertEquals(0, code, err.toString());
    PlanWorkflow.PlanRequest request = requests.stream().filter(r -> r.cluster().name().equals("edge-1")).findFirst().orElseThrow();
    assertEquals(Distribution.KUBEADM, request.template().distribution());
    assertEquals(HostProfile.kubeadmDefaults(), request.template().profile());
    assertFalse(request.inspectHosts(), "--offline skips the hosts");
    assertEquals("25%", request.maxUnavailable());
    assertEquals(List.of("md-a"), request.machineDeployments());
    assertEquals(PlanWorkflow.PlanScope.CLUSTER, request.scope());
    assertEquals("22:00", request.window().start());
    JsonNode json = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
    assertEquals(2, json.get("waves").size());
    assertEquals("KUBEADM", json.get("distribution").asText());
    assertTrue(json.get("scripts").get(0).get("text").asText().contains("kubeadm upgrade apply"));
  }

  @Test
  void theTableShowsWavesFindingsAndStepsAndAnErrorFindingExitsOne(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    assertEquals(1, cli(env, worker, args("refused", "--scope=workers")), err.toString());
    String table = out.toString(StandardCharsets.UTF_8);
    assertTrue(table.contains("WAVE  GROUP"), table);
    assertTrue(table.contains("ERROR     InsufficientDisk  w-1   too full"), table);
    assertTrue(table.contains("upgrade: kubeadm upgrade node [script upgrade-worker]"), table);
    assertTrue(requests.stream().anyMatch(r -> r.cluster().name().equals("refused") && r.inspectHosts()
        && r.scope() == PlanWorkflow.PlanScope.WORKERS));
  }

  @Test
  void aBadScopeIsAUsageErrorAndPlansNothing(TestWorkflowEnvironment env, Worker worker) throws Exception {
    assertEquals(2, cli(env, worker, args("bad-scope", "--scope=everything")));
    assertTrue(err.toString().contains("--scope must be cluster, controlplane or workers"), err.toString());
    assertTrue(requests.stream().noneMatch(r -> r.cluster().name().equals("bad-scope")));
  }
}
