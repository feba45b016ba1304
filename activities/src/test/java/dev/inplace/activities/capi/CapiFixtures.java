package dev.inplace.activities.capi;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/** CAPI objects for the mock management cluster. */
final class CapiFixtures {
  static final String NS = "capi-system";
  /** An infrastructure provider's machine kind, found through its CRD (see {@link #installMetal3MachineCrd}). */
  static final ResourceDefinitionContext METAL3_MACHINE =
      new ResourceDefinitionContext.Builder()
          .withGroup("infrastructure.cluster.x-k8s.io")
          .withVersion("v1beta1")
          .withKind("Metal3Machine")
          .withPlural("metal3machines")
          .withNamespaced(true)
          .build();
  private static final Map<String, ResourceDefinitionContext> TYPES =
      Map.of(
          "Cluster", CapiResources.CLUSTER,
          "Machine", CapiResources.MACHINE,
          "MachineSet", CapiResources.MACHINE_SET,
          "MachineDeployment", CapiResources.MACHINE_DEPLOYMENT,
          "KThreesControlPlane", CapiResources.KTHREES_CONTROL_PLANE,
          "KubeadmControlPlane", CapiResources.KUBEADM_CONTROL_PLANE,
          "KubeadmConfig", CapiResources.KUBEADM_CONFIG,
          "Metal3Machine", CapiFixtures.METAL3_MACHINE);

  private CapiFixtures() {}

  /** Creates every object of the multi-document YAML resource {@code capi/<name>}. */
  static void load(KubernetesClient client, String name) {
    YAMLMapper yaml = new YAMLMapper();
    yaml.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    try (InputStream in = CapiFixtures.class.getResourceAsStream("/capi/" + name);
        MappingIterator<GenericKubernetesResource> objects =
            yaml.readerFor(GenericKubernetesResource.class).readValues(in)) {
      while (objects.hasNext()) {
        create(client, objects.next());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot load fixture capi/" + name, e);
    }
  }

  static GenericKubernetesResource create(
      KubernetesClient client, GenericKubernetesResource object) {
    return client
        .genericKubernetesResources(type(object.getKind()))
        .inNamespace(object.getMetadata().getNamespace())
        .resource(object)
        .create();
  }

  /** The Metal3Machine CRD, as the metal3 provider installs it (storage version v1beta1). */
  static void installMetal3MachineCrd(KubernetesClient client) {
    client.apiextensions().v1().customResourceDefinitions().resource(
            new io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder()
                .withNewMetadata().withName("metal3machines.infrastructure.cluster.x-k8s.io").endMetadata()
                .withNewSpec().withGroup("infrastructure.cluster.x-k8s.io").withScope("Namespaced")
                .withNewNames().withKind("Metal3Machine").withPlural("metal3machines").endNames()
                .addNewVersion().withName("v1alpha5").withServed(false).withStorage(false).endVersion()
                .addNewVersion().withName("v1beta1").withServed(true).withStorage(true).endVersion()
                .endSpec()
                .build())
        .create();
  }

  static GenericKubernetesResource get(
      KubernetesClient client, ResourceDefinitionContext type, String name) {
    return client.genericKubernetesResources(type).inNamespace(NS).withName(name).get();
  }

  /** Sets (or, with a null value, removes) annotations directly, as another actor would. */
  static void annotate(
      KubernetesClient client,
      ResourceDefinitionContext type,
      String name,
      Map<String, String> values) {
    client
        .genericKubernetesResources(type)
        .inNamespace(NS)
        .withName(name)
        .edit(
            r -> {
              Map<String, String> annotations =
                  r.getMetadata().getAnnotations() == null
                      ? new java.util.HashMap<>()
                      : new java.util.HashMap<>(r.getMetadata().getAnnotations());
              annotations.putAll(values);
              r.getMetadata().setAnnotations(annotations);
              return r;
            });
  }

  static ResourceDefinitionContext type(String kind) {
    ResourceDefinitionContext type = TYPES.get(kind);
    if (type == null) {
      throw new IllegalArgumentException("no fixture type for kind " + kind);
    }
    return type;
  }
}
