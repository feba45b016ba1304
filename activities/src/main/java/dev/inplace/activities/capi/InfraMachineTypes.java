package dev.inplace.activities.capi;

import dev.inplace.activities.kube.KubeFailures;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * Finds how to address an infrastructure provider's kind (Metal3Machine, ...) that CAPI v1beta2
 * references by API group and kind only: from its CustomResourceDefinition, the way CAPI itself
 * resolves contract types (plural and storage version).
 */
final class InfraMachineTypes {
  private final KubernetesClient client;

  InfraMachineTypes(KubernetesClient client) {
    this.client = client;
  }

  ResourceDefinitionContext resolve(String group, String kind) {
    String what = kind + "." + group;
    try {
      for (CustomResourceDefinition crd : client.apiextensions().v1().customResourceDefinitions().list().getItems()) {
        if (crd.getSpec() == null || !group.equals(crd.getSpec().getGroup())
            || crd.getSpec().getNames() == null || !kind.equals(crd.getSpec().getNames().getKind())) {
          continue;
        }
        String version =
            crd.getSpec().getVersions().stream()
                .filter(v -> Boolean.TRUE.equals(v.getStorage()))
                .map(CustomResourceDefinitionVersion::getName)
                .findFirst()
                .orElse(crd.getSpec().getVersions().get(0).getName());
        return new ResourceDefinitionContext.Builder()
            .withGroup(group)
            .withVersion(version)
            .withKind(kind)
            .withPlural(crd.getSpec().getNames().getPlural())
            .withNamespaced(true)
            .build();
      }
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, UpgradeFailures.INVALID_REQUEST, "the CustomResourceDefinition of " + what);
    }
    throw UpgradeFailures.nonRetryable(
        UpgradeFailures.INVALID_REQUEST, "no CustomResourceDefinition for " + what + " in the management cluster");
  }
}
