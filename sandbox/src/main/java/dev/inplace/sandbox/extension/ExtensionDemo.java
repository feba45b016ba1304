package dev.inplace.sandbox.extension;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeStep;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.temporal.client.WorkflowClient;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./inplace demo --mode extension}: the worker's CAPI runtime extension on a real HTTPS port
 * (mutual TLS, path prefix {@code /inplace}), registered with a simulated CAPI that upgrades the
 * control plane and then each MachineDeployment through CanUpdateMachine(Set) and UpdateMachine. A
 * node counts as upgraded only when UpdateMachine reported done and its Node reports the target.
 */
public final class ExtensionDemo {
  /** Where inplace looks for the catalogue when the ExtensionConfig settings do not say. */
  static final String CATALOGUE_CONFIG_MAP = "inplace-releases";
  /** "run ID failed: ServiceRestartFailed: restart failed: ..." -> the failure type and the step. */
  private static final Pattern FAILURE = Pattern.compile("failed[^:]*: ([A-Z][A-Za-z]+): (?:([a-z-]+) failed)?");

  private final Estate estate;
  private final WorkflowClient client;
  private final String taskQueue;
  private final DemoOptions options;
  private final PrintStream out;
  private final long startNanos = System.nanoTime();

  public ExtensionDemo(Estate estate, WorkflowClient client, String taskQueue, DemoOptions options, PrintStream out) {
    this.estate = estate;
    this.client = client;
    this.taskQueue = taskQueue;
    this.options = options;
    this.out = out;
  }

  /** Runs the upgrade through the hooks; the final state of every node, by node name. */
  public Map<String, NodeStatus> run() {
    KubernetesClient management = estate.management();
    String ns = Estate.NAMESPACE;
    management.resource(CatalogueReference.configMap(ns, CATALOGUE_CONFIG_MAP, catalogueJson())).create();
    DemoTls tls = DemoTls.create(estate.dir().resolve("extension-tls"));
    ExtensionOptions serverOptions = ExtensionOptions.loopback(tls.serverCert, tls.serverKey, tls.caCert);
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("sshUser", estate.ssh().user());
    settings.put("sshPort", Integer.toString(estate.ssh().port()));
    settings.put("retryAfterSeconds", "1");
    settings.put("drainTimeoutSeconds", Long.toString(options.drainTimeoutSeconds()));
    settings.put("readyTimeoutSeconds", Long.toString(options.readyTimeoutSeconds()));

    Map<String, UpdateOutcome> outcomes = new LinkedHashMap<>();
    // The extension is the worker's (its client's requests are what RBAC must grant); the simulated
    // CAPI below acts as CAPI's controllers do, with the estate's administrator client.
    try (CapiExtension extension = CapiExtension.start(serverOptions, estate.workerManagement(), client, taskQueue,
        estate.artifactPolicy())) {
      HookClient hooks = new HookClient(tls.clientContext(), extension.port(), "/inplace");
      hooks.discover();
      say("ExtensionConfig inplace: discovered can-update-machine, can-update-machineset, update-machine"
          + " at https://localhost:%d/inplace (mutual TLS, failurePolicy Fail)", extension.port());
      ResourceDefinitionContext controlPlaneType = controlPlaneType(management);
      boolean kubeadm = controlPlaneType.getKind().startsWith("Kubeadm");
      CapiSimulator capi = new CapiSimulator(management, estate.workload(), hooks, text -> say("%s", text), settings, ns, kubeadm);
      capi.seed(estate.nodes().stream().map(Estate.EstateNode::machine).toList(), estate.pools(), options.from());
      if (estate.nodes().stream().filter(n -> n.role() == NodeRole.CONTROL_PLANE).count() < 3) {
        say("note: a real KubeadmControlPlane updates in place only with maxSurge 0 and 3+ replicas;"
            + " the simulator runs the generic in-place flow regardless");
      }
      outcomes.putAll(capi.upgradeControlPlane(controlPlaneType, Estate.CONTROL_PLANE, options.to()));
      boolean controlPlaneDone = outcomes.values().stream().allMatch(UpdateOutcome::done);
      if (controlPlaneDone) {
        for (String pool : estate.pools()) {
          outcomes.putAll(capi.upgradeMachineDeployment(pool, Estate.machineSetOf(pool), options.to(), maxUnavailable(pool)));
        }
      } else {
        say("control plane not at %s: MachineDeployments are left alone (a kubelet must never be newer than the apiserver)",
            options.to());
      }
    }
    return statuses(outcomes);
  }

  private Map<String, NodeStatus> statuses(Map<String, UpdateOutcome> outcomes) {
    Map<String, NodeStatus> result = new LinkedHashMap<>();
    for (Estate.EstateNode node : estate.nodes()) {
      UpdateOutcome o = outcomes.get(node.machine());
      Node n = estate.workload().nodes().withName(node.name()).get();
      String kubelet = n == null ? "" : n.getStatus().getNodeInfo().getKubeletVersion();
      boolean atTarget = KubeVersion.isValid(kubelet) && KubeVersion.parse(kubelet).compareTo(KubeVersion.parse(options.to())) == 0;
      NodePhase phase;
      UpgradeStep step = null;
      String reason = "";
      String message = o == null ? "" : o.message();
      if (o != null && o.done() && atTarget) {
        phase = NodePhase.UPGRADED;
      } else if (o == null || !o.started()) {
        phase = o == null ? NodePhase.PENDING : NodePhase.FAILED;
        reason = o == null ? "" : "InPlaceDeclined";
      } else {
        phase = message.contains("rolled back") ? NodePhase.ROLLED_BACK : NodePhase.FAILED;
        Matcher m = FAILURE.matcher(message);
        boolean found = m.find();
        reason = found ? m.group(1) : "UpdateMachineFailed";
        step = found && m.group(2) != null ? step(m.group(2)) : null;
        if (o.done()) {
          reason = "NotAtTarget";
          message = "UpdateMachine reported done but the Node reports " + kubelet;
        }
      }
      result.put(node.name(), new NodeStatus(node.machine(), node.name(), node.role(), phase, step, 0, 0, reason, message, ""));
    }
    return result;
  }

  private static UpgradeStep step(String cliName) {
    try {
      return UpgradeStep.fromCliName(cliName);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private int maxUnavailable(String pool) {
    String text = options.maxUnavailable();
    if (!text.endsWith("%")) {
      return Integer.parseInt(text);
    }
    long workers = estate.nodes().stream().filter(n -> pool.equals(n.pool())).count();
    return (int) Math.max(1, workers * Integer.parseInt(text.substring(0, text.length() - 1)) / 100);
  }

  private static ResourceDefinitionContext controlPlaneType(KubernetesClient management) {
    GenericKubernetesResource cluster = management.genericKubernetesResources(CapiResources.CLUSTER)
        .inNamespace(Estate.NAMESPACE).withName(Estate.CLUSTER).get();
    Object spec = cluster.getAdditionalProperties().get("spec");
    Object ref = spec instanceof Map<?, ?> s ? s.get("controlPlaneRef") : null;
    String kind = ref instanceof Map<?, ?> r ? String.valueOf(r.get("kind")) : "KThreesControlPlane";
    return List.of(CapiResources.KUBEADM_CONTROL_PLANE, CapiResources.KTHREES_CONTROL_PLANE).stream()
        .filter(t -> t.getKind().equals(kind)).findFirst().orElse(CapiResources.KTHREES_CONTROL_PLANE);
  }

  private String catalogueJson() {
    try {
      return Files.readString(estate.catalogue());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the release catalogue " + estate.catalogue(), e);
    }
  }

  private void say(String format, Object... args) {
    Object[] all = new Object[args.length + 1];
    all[0] = (System.nanoTime() - startNanos) / 1e9;
    System.arraycopy(args, 0, all, 1, args.length);
    out.printf("[%6.1fs] " + format + "%n", all);
  }
}
