package dev.inplace.sandbox.kube;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

/** Builders for the objects the sandbox Kubernetes tests create. */
final class KubeObjects {
  static final String NS = "shop";

  private KubeObjects() {}

  static Node readyNode(String name) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .withNewNodeInfo()
        .withKubeletVersion("v1.30.5+k3s1")
        .endNodeInfo()
        .endStatus()
        .build();
  }

  static PodBuilder runningPod(String name, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .addNewContainer()
        .withName("main")
        .withImage("registry.example/app:1")
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus();
  }

  static PodBuilder ownedBy(PodBuilder pod, String kind, String owner) {
    return pod.editMetadata()
        .addNewOwnerReference()
        .withApiVersion(kind.equals("Node") ? "v1" : "apps/v1")
        .withKind(kind)
        .withName(owner)
        .withUid(owner + "-uid")
        .withController(true)
        .endOwnerReference()
        .endMetadata();
  }

  /** A Running, Ready pod of ReplicaSet {@code rs}, labelled {@code app=<app>}. */
  static Pod replicaPod(String name, String rs, String app, String node) {
    return ownedBy(runningPod(name, node), "ReplicaSet", rs)
        .editMetadata()
        .addToLabels("app", app)
        .endMetadata()
        .build();
  }

  static ReplicaSet replicaSet(String name, String app, int replicas) {
    return new ReplicaSetBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("app", app)
        .endSelector()
        .endSpec()
        .build();
  }

  static PodDisruptionBudget minAvailable(String name, String app, IntOrString min) {
    return new PodDisruptionBudgetBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withMinAvailable(min)
        .withNewSelector()
        .addToMatchLabels("app", app)
        .endSelector()
        .endSpec()
        .build();
  }

  static PodDisruptionBudget maxUnavailable(String name, String app, IntOrString max) {
    return new PodDisruptionBudgetBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withMaxUnavailable(max)
        .withNewSelector()
        .addToMatchLabels("app", app)
        .endSelector()
        .endSpec()
        .build();
  }
}
