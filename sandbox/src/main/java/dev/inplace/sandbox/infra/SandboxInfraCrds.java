package dev.inplace.sandbox.infra;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The sandbox's Cluster API infrastructure provider's kinds: SandboxCluster, SandboxMachine and
 * their templates, in {@code infrastructure.sandbox.inplace.dev/v1alpha1}, labelled for the v1beta2
 * contract ({@code cluster.x-k8s.io/v1beta2: v1alpha1}) so Cluster API resolves their version.
 */
public final class SandboxInfraCrds {
  public static final String GROUP = "infrastructure.sandbox.inplace.dev";
  public static final String VERSION = "v1alpha1";
  public static final ResourceDefinitionContext CLUSTER = context("SandboxCluster");
  public static final ResourceDefinitionContext CLUSTER_TEMPLATE = context("SandboxClusterTemplate");
  public static final ResourceDefinitionContext MACHINE = context("SandboxMachine");
  public static final ResourceDefinitionContext MACHINE_TEMPLATE = context("SandboxMachineTemplate");
  public static final List<ResourceDefinitionContext> ALL = List.of(CLUSTER, CLUSTER_TEMPLATE, MACHINE, MACHINE_TEMPLATE);

  private SandboxInfraCrds() {}

  private static ResourceDefinitionContext context(String kind) {
    return new ResourceDefinitionContext.Builder().withGroup(GROUP).withVersion(VERSION).withKind(kind)
        .withPlural(kind.toLowerCase(Locale.ROOT) + "s").withNamespaced(true).build();
  }

  /** Creates or updates the four CRDs and waits until the server serves them. */
  public static void install(KubernetesClient client) {
    for (ResourceDefinitionContext kind : ALL) {
      String name = kind.getPlural() + "." + GROUP;
      CustomResourceDefinition crd = new CustomResourceDefinitionBuilder()
          .withNewMetadata().withName(name).withLabels(Map.of("cluster.x-k8s.io/v1beta2", VERSION)).endMetadata()
          .withNewSpec().withGroup(GROUP).withScope("Namespaced")
          .withNewNames().withKind(kind.getKind()).withPlural(kind.getPlural())
          .withSingular(kind.getKind().toLowerCase(Locale.ROOT)).withListKind(kind.getKind() + "List").endNames()
          .addNewVersion().withName(VERSION).withServed(true).withStorage(true)
          .withNewSchema().withOpenAPIV3Schema(new JSONSchemaPropsBuilder().withType("object")
              .withXKubernetesPreserveUnknownFields(true).build()).endSchema()
          .withNewSubresources().withNewStatus().endStatus().endSubresources()
          .endVersion().endSpec().build();
      client.apiextensions().v1().customResourceDefinitions().resource(crd).serverSideApply();
      client.apiextensions().v1().customResourceDefinitions().withName(name).waitUntilCondition(
          c -> c != null && c.getStatus() != null && c.getStatus().getConditions() != null && c.getStatus().getConditions().stream()
              .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())), 30, TimeUnit.SECONDS);
    }
  }
}
