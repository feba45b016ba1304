package dev.inplace.sandbox.infra;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a booted kubeadm node leaves on its workload API server, as kubeadm and the kubelet would:
 * the Node (its providerID, Ready, the kubelet version; on a control plane its label and
 * {@code NoSchedule} taint), and on a control-plane node the static pods'
 * mirror pods (kube-apiserver, kube-controller-manager, kube-scheduler, Running and Ready), the
 * {@code kube-system/kubeadm-config} ConfigMap on the first one, and on the management cluster the
 * certificate-expiry annotation KCP would otherwise read through a port-forward to the API server's
 * pod (there is no kubelet to forward to). The cluster runs with external etcd: KCP then checks no
 * etcd pods or members (docs/testbed.md).
 */
public final class KubeadmNodeBoot implements MachineBoot {
  static final List<String> STATIC_PODS = List.of("kube-apiserver", "kube-controller-manager", "kube-scheduler");
  private static final ResourceDefinitionContext MACHINES = new ResourceDefinitionContext.Builder()
      .withGroup("cluster.x-k8s.io").withVersion("v1beta2").withKind("Machine").withPlural("machines").withNamespaced(true).build();
  private static final ResourceDefinitionContext KUBEADM_CONFIGS = new ResourceDefinitionContext.Builder()
      .withGroup("bootstrap.cluster.x-k8s.io").withVersion("v1beta2").withKind("KubeadmConfig").withPlural("kubeadmconfigs")
      .withNamespaced(true).build();

  private final KubernetesClient management;
  private final KubernetesClient workload;

  public KubeadmNodeBoot(KubernetesClient management, KubernetesClient workload) {
    this.management = management;
    this.workload = workload;
  }

  /** Boots the node on loopback (no host of its own: the kubelet's version is the Machine's). */
  @Override
  public String boot(String namespace, String machine, String providerID, String version, boolean controlPlane, boolean first) {
    return boot(namespace, machine, providerID, version, controlPlane, first, "127.0.0.1");
  }

  /** As {@link #boot(String, String, String, String, boolean, boolean)}, the Node's InternalIP {@code address}. */
  public String boot(
      String namespace, String machine, String providerID, String version, boolean controlPlane, boolean first, String address) {
    Map<String, String> labels = new LinkedHashMap<>(Map.of("kubernetes.io/hostname", machine, "kubernetes.io/os", "linux"));
    if (controlPlane) {
      labels.put("node-role.kubernetes.io/control-plane", "");
    }
    NodeBuilder builder = new NodeBuilder().withNewMetadata().withName(machine).withLabels(labels).endMetadata()
        .withNewSpec().withProviderID(providerID).endSpec();
    if (controlPlane) {
      // kubeadm init/join taints a control-plane node so that workloads keep off it; KCP checks it.
      builder.editSpec().addNewTaint().withKey("node-role.kubernetes.io/control-plane").withEffect("NoSchedule").endTaint().endSpec();
    }
    Node node = builder.build();
    workload.nodes().resource(node).serverSideApply();
    workload.nodes().withName(machine).editStatus(n -> {
      n.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder()
          .withConditions(ready(), condition("MemoryPressure"), condition("DiskPressure"), condition("PIDPressure"))
          .addNewAddress().withType("InternalIP").withAddress(address).endAddress()
          .addNewAddress().withType("Hostname").withAddress(machine).endAddress()
          .withNewNodeInfo().withKubeletVersion(version).withKubeProxyVersion(version).withOperatingSystem("linux")
          .withArchitecture("amd64").withContainerRuntimeVersion("containerd://1.7.22").withOsImage("sandbox")
          .withKernelVersion("6.1.0").withMachineID(machine).withSystemUUID(machine).withBootID(machine).endNodeInfo()
          .build());
      return n;
    });
    if (!controlPlane) {
      return address;
    }
    for (String component : STATIC_PODS) {
      mirrorPod(component, machine, version);
    }
    if (first) {
      workload.configMaps().inNamespace("kube-system").resource(new ConfigMapBuilder().withNewMetadata()
          .withName("kubeadm-config").withNamespace("kube-system").endMetadata()
          .withData(Map.of("ClusterConfiguration", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
              + "kubernetesVersion: " + version + "\n")).build()).serverSideApply();
    }
    GenericKubernetesResource m = management.genericKubernetesResources(MACHINES).inNamespace(namespace).withName(machine).get();
    String config = configRef(m);
    if (config != null) {
      String expiry = Instant.now().plus(365, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS).toString();
      management.genericKubernetesResources(KUBEADM_CONFIGS).inNamespace(namespace).withName(config).edit(c -> {
        Map<String, String> annotations = new LinkedHashMap<>(
            c.getMetadata().getAnnotations() == null ? Map.of() : c.getMetadata().getAnnotations());
        annotations.put("machine.cluster.x-k8s.io/certificates-expiry", expiry);
        c.getMetadata().setAnnotations(annotations);
        return c;
      });
    }
    return address;
  }

  @Override
  public void shutdown(String namespace, String machine) {
    for (String component : STATIC_PODS) {
      workload.pods().inNamespace("kube-system").withName(component + "-" + machine).withGracePeriod(0).delete();
    }
  }

  private void mirrorPod(String component, String node, String version) {
    String name = component + "-" + node;
    Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace("kube-system")
        .withLabels(Map.of("component", component, "tier", "control-plane"))
        .withAnnotations(Map.of("kubernetes.io/config.mirror", name, "kubernetes.io/config.source", "file"))
        .endMetadata()
        .withNewSpec().withNodeName(node).addNewContainer().withName(component)
        .withImage("registry.k8s.io/" + component + ":" + version).endContainer().endSpec().build();
    workload.pods().inNamespace("kube-system").resource(pod).serverSideApply();
    List<io.fabric8.kubernetes.api.model.PodCondition> conditions = new ArrayList<>();
    for (String type : List.of("PodScheduled", "Initialized", "ContainersReady", "Ready")) {
      conditions.add(new PodConditionBuilder().withType(type).withStatus("True").build());
    }
    workload.pods().inNamespace("kube-system").withName(name).editStatus(p -> {
      p.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running").withConditions(conditions).build());
      return p;
    });
  }

  private static NodeCondition ready() {
    return new NodeConditionBuilder().withType("Ready").withStatus("True").withReason("KubeletReady")
        .withLastHeartbeatTime(Instant.now().toString()).withLastTransitionTime(Instant.now().toString()).build();
  }

  private static NodeCondition condition(String type) {
    return new NodeConditionBuilder().withType(type).withStatus("False").withReason("KubeletHasSufficient" + type)
        .withLastHeartbeatTime(Instant.now().toString()).withLastTransitionTime(Instant.now().toString()).build();
  }

  @SuppressWarnings("unchecked")
  private static String configRef(GenericKubernetesResource machine) {
    if (machine == null) {
      return null;
    }
    Object spec = machine.getAdditionalProperties().get("spec");
    if (spec instanceof Map<?, ?> s && s.get("bootstrap") instanceof Map<?, ?> b && b.get("configRef") instanceof Map<?, ?> ref) {
      return (String) ((Map<String, Object>) ref).get("name");
    }
    return null;
  }
}
