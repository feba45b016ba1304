package dev.inplace.sandbox.extension;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CAPI objects of one namespace as the simulated controllers read and write them on the
 * management cluster: typed lookups, annotation edits, and the request shape of the runtime hooks.
 */
final class CapiObjects {
  static final ObjectMapper JSON = new ObjectMapper();
  static final ResourceDefinitionContext METAL3_MACHINE = context("infrastructure.cluster.x-k8s.io", "v1beta1", "Metal3Machine", "metal3machines");
  static final ResourceDefinitionContext METAL3_MACHINE_TEMPLATE =
      context("infrastructure.cluster.x-k8s.io", "v1beta1", "Metal3MachineTemplate", "metal3machinetemplates");

  final KubernetesClient management;
  final String namespace;
  final boolean kubeadm;
  final ResourceDefinitionContext bootstrapConfig;
  final ResourceDefinitionContext bootstrapTemplate;

  CapiObjects(KubernetesClient management, String namespace, boolean kubeadm) {
    this.management = management;
    this.namespace = namespace;
    this.kubeadm = kubeadm;
    String prefix = kubeadm ? "Kubeadm" : "KThrees";
    this.bootstrapConfig = context("bootstrap.cluster.x-k8s.io", "v1beta2", prefix + "Config", prefix.toLowerCase() + "configs");
    this.bootstrapTemplate =
        context("bootstrap.cluster.x-k8s.io", "v1beta2", prefix + "ConfigTemplate", prefix.toLowerCase() + "configtemplates");
  }

  GenericKubernetesResource get(ResourceDefinitionContext type, String name) {
    GenericKubernetesResource r = management.genericKubernetesResources(type).inNamespace(namespace).withName(name).get();
    if (r == null) {
      throw new IllegalStateException(type.getKind() + " " + namespace + "/" + name + " not found");
    }
    return r;
  }

  /** Creates an object unless the estate already holds one of that name (then it is used as it is). */
  void create(ResourceDefinitionContext type, String name, Map<String, Object> spec) {
    if (management.genericKubernetesResources(type).inNamespace(namespace).withName(name).get() != null) {
      return;
    }
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder()
        .withApiVersion(type.getGroup() + "/" + type.getVersion()).withKind(type.getKind())
        .withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build();
    r.setAdditionalProperty("spec", spec);
    management.genericKubernetesResources(type).inNamespace(namespace).resource(r).create();
  }

  void annotate(ResourceDefinitionContext type, String name, Map<String, String> add, List<String> remove) {
    management.genericKubernetesResources(type).inNamespace(namespace).withName(name).edit(r -> {
      Map<String, String> annotations = annotations(r);
      annotations.putAll(add);
      remove.forEach(annotations::remove);
      return r;
    });
  }

  void scale(String machineSet, int replicas) {
    management.genericKubernetesResources(CapiResources.MACHINE_SET).inNamespace(namespace).withName(machineSet)
        .edit(s -> { spec(s).put("replicas", replicas); return s; });
  }

  /** Names of the Machines with this label (any value when {@code value} is null), sorted. */
  List<String> machines(String label, String value) {
    var machines = management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace);
    return (value == null ? machines.withLabel(label) : machines.withLabel(label, value)).list().getItems().stream()
        .map(m -> m.getMetadata().getName()).sorted().toList();
  }

  String nodeOf(String machine) {
    Object status = get(CapiResources.MACHINE, machine).getAdditionalProperties().get("status");
    return map(map(status).get("nodeRef")).get("name") instanceof String s ? s : null;
  }

  static String infraOf(GenericKubernetesResource machine) {
    return String.valueOf(map(spec(machine).get("infrastructureRef")).get("name"));
  }

  static String bootstrapOf(GenericKubernetesResource machine) {
    return String.valueOf(map(map(spec(machine).get("bootstrap")).get("configRef")).get("name"));
  }

  /** An object as CAPI puts it in a request: apiVersion, kind, name, namespace, labels, annotations, spec. */
  static ObjectNode strip(GenericKubernetesResource resource) {
    ObjectNode o = JSON.createObjectNode();
    o.put("apiVersion", resource.getApiVersion());
    o.put("kind", resource.getKind());
    ObjectNode metadata = o.putObject("metadata");
    metadata.put("name", resource.getMetadata().getName());
    metadata.put("namespace", resource.getMetadata().getNamespace());
    metadata.set("labels", JSON.valueToTree(labels(resource)));
    metadata.set("annotations", JSON.valueToTree(clean(resource.getMetadata().getAnnotations())));
    o.set("spec", JSON.valueToTree(spec(resource)));
    return o;
  }

  private static Map<String, String> clean(Map<String, String> annotations) {
    Map<String, String> result = new LinkedHashMap<>();
    if (annotations != null) {
      annotations.forEach((k, v) -> {
        if (v != null) {
          result.put(k, v);
        }
      });
    }
    return result;
  }

  static Map<String, String> annotations(GenericKubernetesResource r) {
    Map<String, String> a = new LinkedHashMap<>(clean(r.getMetadata().getAnnotations()));
    r.getMetadata().setAnnotations(a);
    return a;
  }

  static Map<String, String> labels(GenericKubernetesResource r) {
    return r.getMetadata().getLabels() == null ? new HashMap<>() : new LinkedHashMap<>(r.getMetadata().getLabels());
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> spec(GenericKubernetesResource r) {
    Object spec = r.getAdditionalProperties().get("spec");
    Map<String, Object> copy = spec instanceof Map<?, ?> m ? new LinkedHashMap<>((Map<String, Object>) m) : new LinkedHashMap<>();
    r.setAdditionalProperty("spec", copy);
    return copy;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value) {
    return value instanceof Map<?, ?> m ? (Map<String, Object>) m : new LinkedHashMap<>();
  }

  private static ResourceDefinitionContext context(String group, String version, String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup(group).withVersion(version).withKind(kind)
        .withPlural(plural).withNamespaced(true).build();
  }
}
