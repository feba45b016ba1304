package dev.inplace.worker.extension;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.worker.intake.RunIntake;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import static dev.inplace.worker.extension.CanUpdateContractTest.fixture;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * UpdateMachine against the fixture request (desired objects only, as CAPI sends them), with the
 * Machine, Secrets and catalogue in a mock API server and the runs and Nodes as stand-ins: started
 * once, then in progress, done only when the Node reports the target, a clear Failure after a failed
 * run, a new run only for a new spec.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class UpdateMachineContractTest {
  private static final String TARGET = "v1.31.2+k3s1";
  KubernetesClient client;

  private final FakeRuns runs = new FakeRuns();
  private final FakeNodes nodes = new FakeNodes();
  private UpdateMachineHook hook;
  private JsonNode request;

  static final class FakeRuns implements NodeRuns {
    final Map<String, Run> runs = new HashMap<>();
    final List<NodeUpgradeRequest> started = new ArrayList<>();
    final List<String> startedIds = new ArrayList<>();

    @Override
    public Run find(String workflowId) {
      return runs.getOrDefault(workflowId, new Run(State.NOT_FOUND, "", false));
    }

    @Override
    public boolean start(String workflowId, NodeUpgradeRequest request) {
      if (find(workflowId).state() == State.RUNNING) {
        return false;
      }
      started.add(request);
      startedIds.add(workflowId);
      runs.put(workflowId, new Run(State.RUNNING, "upgrading at preflight", false));
      return true;
    }
  }

  static final class FakeNodes implements WorkloadNodes {
    final Map<String, String> kubelets = new HashMap<>();

    @Override
    public Optional<String> kubeletVersion(ClusterRef cluster, String node) {
      return Optional.ofNullable(kubelets.get(node));
    }

    @Override
    public List<String> otherControlPlaneVersions(ClusterRef cluster, String except) {
      return List.of();
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    request = fixture("update-machine-request.json");
    hook = new UpdateMachineHook(client, runs, nodes, new RunIntake(client, ArtifactSourcePolicy.httpsOnly()));
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("fleet")
        .addToLabels(UpdateMachineHook.OPT_IN_LABEL, "true").endMetadata().build()).create();
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(CapiResources.CLUSTER_NAME_LABEL, "edge-1");
    labels.put(CapiResources.CONTROL_PLANE_LABEL, "");
    GenericKubernetesResource machine = new GenericKubernetesResourceBuilder()
        .withApiVersion("cluster.x-k8s.io/v1beta2").withKind("Machine")
        .withNewMetadata().withName("edge-1-cp-0").withNamespace("fleet").withLabels(labels).endMetadata()
        .build();
    machine.setAdditionalProperty("spec", Map.of("clusterName", "edge-1", "version", TARGET));
    machine.setAdditionalProperty("status", Map.of(
        "nodeRef", Map.of("name", "cp-0"),
        "addresses", List.of(Map.of("type", "Hostname", "address", "cp-0"), Map.of("type", "InternalIP", "address", "10.0.0.10"))));
    client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("fleet").resource(machine).create();
    secret("edge-1-ssh-key", "ssh-privatekey");
    secret("edge-1-known-hosts", "known_hosts");
    secret("edge-1-kubeconfig", "value");
    client.configMaps().inNamespace("fleet").resource(new ConfigMapBuilder()
        .withNewMetadata().withName("k3s-releases").endMetadata()
        .addToData("catalogue.json", """
            {"releases":[{"version":"%s","distribution":"K3S","arch":"amd64","artifacts":[
              {"name":"k3s","kind":"BINARY","source":"https://releases.example/k3s","sha256":"%s",
               "sizeBytes":1024,"installPath":"/usr/local/bin/k3s","mode":"0755"}]}]}""".formatted(TARGET, "ab".repeat(32)))
        .build()).create();
  }

  private void secret(String name, String key) {
    client.secrets().inNamespace("fleet").resource(new SecretBuilder()
        .withNewMetadata().withName(name).endMetadata().addToData(key, "eA==").build()).create();
  }

  private String runId() {
    return WorkflowIds.nodeUpgradeForHook("fleet", "edge-1-cp-0", UpdateMachineHook.specHash(request.get("desired"), null));
  }

  private static void assertShape(String fixture, ObjectNode answer) throws Exception {
    JsonNode expected = fixture(fixture);
    for (String field : List.of("apiVersion", "kind", "status", "retryAfterSeconds")) {
      assertEquals(expected.get(field), answer.get(field), field + " of " + answer);
    }
    if (expected.has("message")) {
      assertEquals(expected.get("message"), answer.get("message"));
    }
    assertTrue(answer.get("message").isTextual());
  }

  @Test
  void theFirstCallStartsOneRunFromTheSettingsAndAnswersInProgress() throws Exception {
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-in-progress.json", answer);
    assertEquals(1, runs.started.size());
    NodeUpgradeRequest started = runs.started.get(0);
    assertEquals(Distribution.K3S, started.distribution());
    assertEquals(TARGET, started.targetVersion());
    assertEquals("cp-0", started.node().nodeName());
    assertEquals("10.0.0.10", started.node().address());
    assertEquals(NodeRole.CONTROL_PLANE, started.node().role());
    assertEquals("inplace", started.ssh().user());
    assertEquals(2222, started.ssh().port());
    assertEquals("edge-1-ssh-key", started.ssh().privateKeySecret());
    assertEquals("edge-1-known-hosts", started.ssh().knownHostsSecret());
    assertEquals("/usr/local/bin/k3s", started.artifacts().get(0).installPath());
    assertFalse(started.drain().skip(), "drains by default");
    assertEquals(runId(), machineAnnotations().get(UpdateMachineHook.RUN_ANNOTATION));
    assertTrue(started.markMachine(), "no parent marks the Machine on this path: the run marks it itself");
    // The whole request, field for field, as the hook has always built it from these settings.
    assertEquals(new NodeUpgradeRequest(
        new NodeTarget(new ClusterRef("fleet", "edge-1"), "edge-1-cp-0", "cp-0", NodeRole.CONTROL_PLANE, "10.0.0.10"),
        Distribution.K3S, TARGET, started.artifacts(), HostProfile.k3sDefaults(),
        new SshSettings("inplace", 2222, "edge-1-ssh-key", "edge-1-known-hosts", null),
        new DrainOptions(300, true, false, PdbBlockedAction.FAIL, false), 300, 0, "amd64", false, true), started);
  }

  @Test
  void settingsTheIntakeRefusesAreAFailureNamingTheSettingAndItsType() throws Exception {
    ((ObjectNode) request.get("settings")).put("os", "windows");
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-failed.json", answer);
    assertEquals("cannot upgrade node cp-0: InvalidRequest: setting os must be standard or kairos, got 'windows'",
        answer.get("message").asText());
    assertEquals(0, runs.started.size());
  }

  @Test
  void aMistypedOrNonStringSettingIsAFailureNamingItAndStartsNothing() throws Exception {
    // The server answers what the handler throws as a Failure with its message (HookServerTest).
    ((ObjectNode) request.get("settings")).put("readyTimeout", "900");
    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> hook.handle(request));
    assertTrue(unknown.getMessage().startsWith("setting 'readyTimeout' is not known (the ExtensionConfig's"
        + " settings are sshUser, sshPort,"), unknown.getMessage());

    ((ObjectNode) request.get("settings")).remove("readyTimeout");
    ((ObjectNode) request.get("settings")).putObject("sshUser").put("name", "root");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HookSettings.of(request));
    assertEquals("setting sshUser must be a string", e.getMessage());
    ((ObjectNode) request.get("settings")).put("sshUser", "root").put("sshPort", 2222);
    e = assertThrows(IllegalArgumentException.class, () -> HookSettings.of(request));
    assertEquals("setting sshPort must be a string", e.getMessage(), "CAPI sends map[string]string: \"2222\"");
    assertEquals(0, runs.started.size());
  }

  @Test
  void theSkipDrainSettingCordonsWithoutDrainingAndABadValueIsNamed() throws Exception {
    ((ObjectNode) request.get("settings")).put("skipDrain", "true");
    hook.handle(request);
    assertTrue(runs.started.get(0).drain().skip());

    HookSettings bad = new HookSettings(java.util.Map.of(HookSettings.SKIP_DRAIN, "yes"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, bad::skipDrain);
    assertTrue(e.getMessage().contains("setting skipDrain must be true or false"), e.getMessage());
  }

  @Test
  void repeatedCallsFindTheSameRunAndNeverStartASecond() throws Exception {
    hook.handle(request);
    ObjectNode again = hook.handle(request.deepCopy());

    assertShape("update-machine-response-in-progress.json", again);
    assertTrue(again.get("message").asText().contains("upgrading at preflight"), again.toString());
    assertEquals(1, runs.started.size());
  }

  @Test
  void doneOnlyWhenTheRunCompletedAndTheNodeReportsTheTarget() throws Exception {
    runs.runs.put(runId(), new NodeRuns.Run(NodeRuns.State.COMPLETED, "", true));
    nodes.kubelets.put("cp-0", "v1.30.6+k3s1");
    ObjectNode notThere = hook.handle(request);
    assertShape("update-machine-response-failed.json", notThere);
    assertTrue(notThere.get("message").asText().contains("reports kubelet v1.30.6+k3s1"), notThere.toString());

    nodes.kubelets.put("cp-0", TARGET);
    assertShape("update-machine-response-done.json", hook.handle(request));
    assertEquals(0, runs.started.size());
  }

  @Test
  void aK0sNodeReportingPlusK0sIsDoneAtTheReleasePlusK0sOne() throws Exception {
    String release = "v1.31.2+k0s.1";
    ((ObjectNode) request.path("desired").path("machine").path("spec")).put("version", release);
    storedMachineSpec(Map.of("clusterName", "edge-1", "version", release));
    runs.runs.put(runId(), new NodeRuns.Run(NodeRuns.State.COMPLETED, "", true));
    nodes.kubelets.put("cp-0", "v1.31.2+k0s");

    ObjectNode done = hook.handle(request);

    assertEquals("Success", done.get("status").asText(), done.toString());
    assertEquals(0, done.get("retryAfterSeconds").asInt());
    assertEquals("node cp-0 runs " + release, done.get("message").asText());

    nodes.kubelets.put("cp-0", "v1.31.1+k0s");
    ObjectNode behind = hook.handle(request);
    assertShape("update-machine-response-failed.json", behind);
    assertTrue(behind.get("message").asText().contains("reports kubelet v1.31.1+k0s"), behind.toString());
  }

  @Test
  void aRunThatChangedTheNodeAndWasRolledBackIsAFailureAndNotRetriedForTheSameSpec() throws Exception {
    runs.runs.put(runId(), new NodeRuns.Run(NodeRuns.State.FAILED,
        "ServiceRestartFailed: restart failed: k3s did not start; rolled back to v1.30.6+k3s1", true));
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-failed.json", answer);
    assertTrue(answer.get("message").asText().contains("rolled back to v1.30.6+k3s1"), answer.toString());
    assertTrue(answer.get("message").asText().contains(UpdateMachineHook.RETRY_TOKEN_ANNOTATION), answer.toString());
    assertEquals(0, runs.started.size());
  }

  @Test
  void aNewRetryTokenOrANewSpecStartsANewRunAfterAFailure() throws Exception {
    runs.runs.put(runId(), new NodeRuns.Run(NodeRuns.State.FAILED, "VerifyTimeout: rolled back", true));
    client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("fleet").withName("edge-1-cp-0")
        .edit(m -> { m.getMetadata().setAnnotations(Map.of(UpdateMachineHook.RETRY_TOKEN_ANNOTATION, "1")); return m; });

    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-in-progress.json", answer);
    assertEquals(1, runs.startedIds.size());
    assertNotEquals(runId(), runs.startedIds.get(0));
  }

  @Test
  void aRunThatStoppedInPreflightIsReportedAndTriedAgain() throws Exception {
    runs.runs.put(runId(), new NodeRuns.Run(NodeRuns.State.FAILED, "HostUnreachable: no route to 10.0.0.10", false));
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-failed.json", answer);
    assertTrue(answer.get("message").asText().contains("a new attempt has been started"), answer.toString());
    assertEquals(List.of(runId()), runs.startedIds);
  }

  @Test
  void aRetryTheIntakeRefusesSaysWhyAndClaimsNoNewAttempt() throws Exception {
    runs.runs.put(runId(), new NodeRuns.Run(NodeRuns.State.FAILED, "HostUnreachable: no route to 10.0.0.10", false));
    client.secrets().inNamespace("fleet").withName("edge-1-known-hosts").delete();
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-failed.json", answer);
    assertEquals("cannot upgrade node cp-0: SecretNotFound: Secret fleet/edge-1-known-hosts (the pinned host keys)"
        + " not found", answer.get("message").asText());
    assertEquals(0, runs.started.size());
  }

  @Test
  void anEarlierSpecStillRunningOnTheMachineIsWaitedFor() throws Exception {
    client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("fleet").withName("edge-1-cp-0")
        .edit(m -> { m.getMetadata().setAnnotations(Map.of(UpdateMachineHook.RUN_ANNOTATION, "node-upgrade-hook/fleet/edge-1-cp-0/older")); return m; });
    runs.runs.put("node-upgrade-hook/fleet/edge-1-cp-0/older", new NodeRuns.Run(NodeRuns.State.RUNNING, "drain", false));

    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-in-progress.json", answer);
    assertTrue(answer.get("message").asText().contains("an earlier desired spec"), answer.toString());
    assertEquals(0, runs.started.size());
  }

  @Test
  void aMissingSecretIsAFailureThatStartsNothing() throws Exception {
    client.secrets().inNamespace("fleet").withName("edge-1-known-hosts").delete();
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-failed.json", answer);
    assertTrue(answer.get("message").asText().contains(
        "SecretNotFound: Secret fleet/edge-1-known-hosts (the pinned host keys) not found"), answer.toString());
    assertEquals(0, runs.started.size());
  }

  @Test
  void aNamespaceNotOptedInIsRefusedWithTheSameMessageWhateverExists() throws Exception {
    client.namespaces().withName("fleet").edit(n -> new NamespaceBuilder(n).editMetadata()
        .removeFromLabels(UpdateMachineHook.OPT_IN_LABEL).endMetadata().build());
    ObjectNode withEverything = hook.handle(request);
    client.secrets().inNamespace("fleet").withName("edge-1-known-hosts").delete();
    client.configMaps().inNamespace("fleet").withName("k3s-releases").delete();
    ObjectNode withNothing = hook.handle(request);
    ObjectNode otherNamespace = hook.handle(withNamespace(request, "kube-system"));

    assertShape("update-machine-response-failed.json", withEverything);
    assertEquals("namespace fleet is not opted in to in-place updates (label upgrade.inplace.dev/in-place=true)",
        withEverything.get("message").asText());
    assertEquals(withEverything, withNothing);
    assertEquals(withEverything.get("message").asText().replace("fleet", "kube-system"),
        otherNamespace.get("message").asText());
    assertTrue(runs.started.isEmpty());
  }

  private static JsonNode withNamespace(JsonNode request, String namespace) {
    JsonNode copy = request.deepCopy();
    ((ObjectNode) copy.path("desired").path("machine").path("metadata")).put("namespace", namespace);
    return copy;
  }

  @Test
  void aRequestForAnotherVersionThanTheMachinesIsRefusedAndStartsNothing() throws Exception {
    ((ObjectNode) request.at("/desired/machine/spec")).put("version", "v1.32.0+k3s1");
    ObjectNode answer = hook.handle(request);

    assertShape("update-machine-response-failed.json", answer);
    assertEquals("desired.machine.spec.version v1.32.0+k3s1 is not Machine fleet/edge-1-cp-0's spec.version " + TARGET
        + ": CAPI writes the desired spec to the Machine before it calls UpdateMachine", answer.get("message").asText());
    assertEquals(0, runs.started.size());
    assertNull(machineAnnotations() == null ? null : machineAnnotations().get(UpdateMachineHook.RUN_ANNOTATION));
  }

  @Test
  void theDistributionComesFromTheMachinesBootstrapConfigNotFromTheRequest() throws Exception {
    storedMachineSpec(Map.of("clusterName", "edge-1", "version", TARGET,
        "bootstrap", Map.of("configRef", Map.of("apiGroup", "bootstrap.cluster.x-k8s.io", "kind", "KubeadmConfig",
            "name", "edge-1-cp-0"))));
    ObjectNode answer = hook.handle(request); // the request says KThreesConfig

    assertShape("update-machine-response-failed.json", answer);
    assertEquals("cannot upgrade node cp-0: InvalidRequest: desired.bootstrapConfig.kind KThreesConfig is not the kind"
        + " of Machine fleet/edge-1-cp-0's bootstrap config (KubeadmConfig)", answer.get("message").asText());
    assertEquals(0, runs.started.size());

    storedMachineSpec(Map.of("clusterName", "edge-1", "version", TARGET,
        "bootstrap", Map.of("configRef", Map.of("apiGroup", "bootstrap.cluster.x-k8s.io", "kind", "KThreesConfig",
            "name", "edge-1-cp-0"))));
    ((ObjectNode) request.path("desired")).remove("bootstrapConfig");
    hook.handle(request);
    assertEquals(Distribution.K3S, runs.started.get(0).distribution(), "the Machine's own kind, without one in the request");
  }

  private void storedMachineSpec(Map<String, Object> spec) {
    client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("fleet").withName("edge-1-cp-0").edit(m -> {
      m.setAdditionalProperty("spec", spec);
      return m;
    });
  }

  @Test
  void anUnknownMachineIsAFailure() throws Exception {
    ((ObjectNode) request.at("/desired/machine/metadata")).put("name", "edge-1-cp-9");
    ObjectNode answer = hook.handle(request);
    assertShape("update-machine-response-failed.json", answer);
    assertEquals("Machine fleet/edge-1-cp-9 not found", answer.get("message").asText());
  }

  @Test
  void theSpecHashIgnoresAnnotationsButNotTheSpec() throws Exception {
    JsonNode desired = request.get("desired");
    JsonNode relabelled = desired.deepCopy();
    ((ObjectNode) relabelled.at("/machine/metadata/annotations")).put("other", "x");
    assertEquals(UpdateMachineHook.specHash(desired, null), UpdateMachineHook.specHash(relabelled, null));
    JsonNode respecced = desired.deepCopy();
    ((ObjectNode) respecced.at("/machine/spec")).put("version", "v1.31.3+k3s1");
    assertNotEquals(UpdateMachineHook.specHash(desired, null), UpdateMachineHook.specHash(respecced, null));
    assertFalse(UpdateMachineHook.specHash(desired, null).equals(UpdateMachineHook.specHash(desired, "1")));
  }

  private Map<String, String> machineAnnotations() {
    return client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("fleet").withName("edge-1-cp-0").get()
        .getMetadata().getAnnotations();
  }
}
