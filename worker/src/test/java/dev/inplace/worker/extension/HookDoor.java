package dev.inplace.worker.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.activities.capi.CapiResources;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.worker.intake.RunIntake;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;

/**
 * The UpdateMachine door for tests outside this package (the watcher's BothDoorsRefuseAlikeTest):
 * the real hook over a management API server, its Node reads through the kubeconfig Secret as in
 * production, and the runs it starts recorded instead of started.
 */
public final class HookDoor implements AutoCloseable {
  /** Setting names, as an ExtensionConfig writes them. */
  public static final String OS = HookSettings.OS;
  public static final String ARCH = HookSettings.ARCH;
  public static final String HOST_PROFILE = HookSettings.HOST_PROFILE;
  public static final String SSH_KEY_SECRET = HookSettings.SSH_KEY_SECRET;
  public static final String CATALOGUE_CONFIG_MAP = HookSettings.CATALOGUE_CONFIG_MAP;

  private static final ObjectMapper JSON = new ObjectMapper();
  private final UpdateMachineContractTest.FakeRuns runs = new UpdateMachineContractTest.FakeRuns();
  private final KubeClients kubeClients;
  private final UpdateMachineHook hook;

  /** Opts {@code namespace} in and builds the hook with the production intake. */
  public HookDoor(KubernetesClient management, String namespace) {
    management.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace)
        .addToLabels(UpdateMachineHook.OPT_IN_LABEL, "true").endMetadata().build()).createOr(n -> n.update());
    kubeClients = new KubeClients(management);
    hook = new UpdateMachineHook(management, runs, new KubeWorkloadNodes(kubeClients),
        new RunIntake(management, ArtifactSourcePolicy.httpsOnly()));
  }

  /**
   * Asks UpdateMachine for Machine {@code namespace/machine} of {@code cluster} to move to {@code
   * version}, with a KThreesConfig bootstrap and {@code settings}; the hook's answer.
   */
  public ObjectNode updateMachine(
      String namespace, String cluster, String machine, String version, Map<String, String> settings)
      throws Exception {
    ObjectNode request = (ObjectNode) JSON.readTree("""
        {"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"UpdateMachineRequest",
         "desired":{"machine":{"metadata":{"name":"%s","namespace":"%s"},
                               "spec":{"clusterName":"%s","version":"%s"}},
                    "infrastructureMachine":{"kind":"Metal3Machine","spec":{}},
                    "bootstrapConfig":{"kind":"KThreesConfig","spec":{}}}}"""
        .formatted(machine, namespace, cluster, version));
    ObjectNode values = request.putObject("settings");
    settings.forEach(values::put);
    // As CAPI does before it calls UpdateMachine, the desired version is on the Machine during the call;
    // put back after, so the other door (the custom resources) sees the estate as it was.
    var machines = kubeClients.management().genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace);
    Object stored = machines.withName(machine).get().getAdditionalProperties().get("spec");
    machines.withName(machine).edit(m -> {
      @SuppressWarnings("unchecked")
      Map<String, Object> desired = new java.util.LinkedHashMap<>(stored == null ? Map.of() : (Map<String, Object>) stored);
      desired.put("version", version);
      m.setAdditionalProperty("spec", desired);
      return m;
    });
    try {
      return hook.handle((JsonNode) request);
    } finally {
      machines.withName(machine).edit(m -> {
        m.setAdditionalProperty("spec", stored);
        return m;
      });
    }
  }

  /** The run ID the hook wrote on Machine {@code namespace/machine} when it started a run; null before. */
  public String runAnnotation(String namespace, String machine) {
    GenericKubernetesResource found = kubeClients.management().genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace)
        .withName(machine).get();
    return found.getMetadata().getAnnotations() == null ? null
        : found.getMetadata().getAnnotations().get(UpdateMachineHook.RUN_ANNOTATION);
  }

  /** The NodeUpgrade runs the hook started, in order. */
  public List<NodeUpgradeRequest> started() {
    return List.copyOf(runs.started);
  }

  @Override
  public void close() {
    kubeClients.close();
  }
}
