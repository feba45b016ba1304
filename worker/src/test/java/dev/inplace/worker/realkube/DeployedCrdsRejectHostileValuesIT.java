package dev.inplace.worker.realkube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CRDs of deploy/crds, applied to a real kube-apiserver, reject what their schema says they
 * reject (OpenAPI patterns, enums, bounds and the CEL rule on maxUnavailable) with 422 naming the
 * field, and the server applies their defaults: the first check a hostile resource writer meets,
 * before the watcher's own intake.
 */
class DeployedCrdsRejectHostileValuesIT {
  private static final String NAMESPACE = "crd-checks";
  private static final ResourceDefinitionContext WORKERS = new ResourceDefinitionContext.Builder()
      .withGroup("upgrade.inplace.dev").withVersion("v1alpha1").withKind("WorkersUpgrade")
      .withPlural("workersupgrades").withNamespaced(true).build();
  private static KubernetesClient kube;

  @BeforeAll
  static void applyDeployedCrds() throws IOException {
    kube = RealManagementCluster.adminClient();
    for (Path file : crdFiles()) {
      CustomResourceDefinition crd;
      try (InputStream in = Files.newInputStream(file)) {
        crd = Serialization.unmarshal(in, CustomResourceDefinition.class);
      }
      // Forced: another test in this JVM may have installed the generated CRDs under another field manager.
      kube.apiextensions().v1().customResourceDefinitions().resource(crd).forceConflicts().serverSideApply();
      kube.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).waitUntilCondition(
          c -> c != null && c.getStatus() != null && c.getStatus().getConditions() != null && c.getStatus().getConditions().stream()
              .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())), 30, TimeUnit.SECONDS);
    }
    kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .serverSideApply();
  }

  @AfterAll
  static void close() {
    if (kube != null) {
      kube.close();
    }
  }

  static List<Path> crdFiles() throws IOException {
    Path dir = repositoryRoot().resolve("deploy/crds");
    List<Path> files = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "*.upgrade.inplace.dev.yaml")) {
      stream.forEach(files::add);
    }
    assertTrue(files.size() >= 2, "deploy/crds holds the CRDs");
    return files;
  }

  static Path repositoryRoot() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      if (Files.isDirectory(d.resolve("deploy/crds"))) {
        return d;
      }
    }
    throw new IllegalStateException("no deploy/crds above the working directory");
  }

  /** A WorkersUpgrade the schema accepts; each case changes one field of it. */
  static Map<String, Object> validSpec() {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("clusterName", "edge-1");
    spec.put("version", "v1.31.2+k3s1");
    spec.put("releaseCatalogue", new LinkedHashMap<>(Map.of("configMapName", "k3s-releases")));
    spec.put("ssh", new LinkedHashMap<>(Map.of("privateKeySecret", "edge-1-ssh-key", "knownHostsSecret", "edge-1-known-hosts")));
    return spec;
  }

  static Stream<Arguments> hostileValues() {
    return Stream.of(
        Arguments.of("version with a shell command", "version", "v1.31.2;reboot", "spec.version"),
        Arguments.of("version without the v", "version", "1.31.2", "spec.version"),
        Arguments.of("cluster name with upper case and underscore", "clusterName", "Edge_1", "spec.clusterName"),
        Arguments.of("unknown distribution", "distribution", "RKE2", "spec.distribution"),
        Arguments.of("architecture with a shell command", "arch", "amd64;id", "spec.arch"),
        Arguments.of("maxUnavailable zero", "maxUnavailable", 0, "maxUnavailable must be a count of at least 1"),
        Arguments.of("maxUnavailable zero percent", "maxUnavailable", "0%", "maxUnavailable must be a count of at least 1"),
        Arguments.of("maxUnavailable over 100%", "maxUnavailable", "101%", "maxUnavailable must be a count of at least 1"),
        Arguments.of("maxUnavailable negative", "maxUnavailable", -1, "maxUnavailable must be a count of at least 1"),
        Arguments.of("ssh user with a shell command", "ssh.user", "root;id", "spec.ssh.user"),
        Arguments.of("ssh port out of range", "ssh.port", 70000, "spec.ssh.port"),
        Arguments.of("jump host with a path", "ssh.jumpHost", "bastion:22/../x", "spec.ssh.jumpHost"),
        Arguments.of("secret name with a slash", "ssh.privateKeySecret", "kube-system/admin", "spec.ssh.privateKeySecret"),
        Arguments.of("catalogue key with a path", "releaseCatalogue.key", "../../etc/passwd", "spec.releaseCatalogue.key"),
        Arguments.of("window start out of range", "maintenanceWindow", Map.of("start", "25:00", "end", "03:00"), "spec.maintenanceWindow.start"),
        Arguments.of("window day unknown", "maintenanceWindow", Map.of("start", "01:00", "end", "03:00", "days", List.of("Funday")), "spec.maintenanceWindow.days[0]"),
        Arguments.of("drain timeout zero", "drain", Map.of("timeoutSeconds", 0), "spec.drain.timeoutSeconds"),
        Arguments.of("unknown failure policy", "failurePolicy", Map.of("type", "Ignore"), "spec.failurePolicy.type"),
        Arguments.of("MachineDeployment name with a space", "machineDeployments", List.of("md a"), "spec.machineDeployments[0]"),
        Arguments.of("negative soak", "soakSeconds", -1, "spec.soakSeconds"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileValues")
  void serverRefusesAHostileValueNamingTheField(String label, String field, Object value, String expected) {
    Map<String, Object> spec = validSpec();
    put(spec, field, value);
    String name = "hostile-" + Math.abs(label.hashCode());
    KubernetesClientException refused = assertThrows(KubernetesClientException.class,
        () -> kube.genericKubernetesResources(WORKERS).inNamespace(NAMESPACE).resource(resource(name, spec)).create(), label);
    assertEquals(422, refused.getCode(), label + ": " + refused.getMessage());
    assertTrue(refused.getMessage().contains(expected), label + ": the refusal names " + expected + ": " + refused.getMessage());
    assertEquals(null, kube.genericKubernetesResources(WORKERS).inNamespace(NAMESPACE).withName(name).get(), "nothing stored");
  }

  @Test
  void serverStoresAValidResourceWithTheSchemasDefaults() {
    GenericKubernetesResource stored = kube.genericKubernetesResources(WORKERS).inNamespace(NAMESPACE)
        .resource(resource("valid", validSpec())).create();
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) stored.getAdditionalProperties().get("spec");
    assertEquals("amd64", spec.get("arch"));
    assertEquals("K3S", spec.get("distribution"));
    @SuppressWarnings("unchecked")
    Map<String, Object> ssh = (Map<String, Object>) spec.get("ssh");
    assertEquals("root", ssh.get("user"));
    assertEquals(22, ((Number) ssh.get("port")).intValue());
  }

  @SuppressWarnings("unchecked")
  private static void put(Map<String, Object> spec, String dotted, Object value) {
    String[] parts = dotted.split("\\.");
    Map<String, Object> at = spec;
    for (int i = 0; i < parts.length - 1; i++) {
      at = (Map<String, Object>) at.computeIfAbsent(parts[i], k -> new LinkedHashMap<>());
    }
    at.put(parts[parts.length - 1], value);
  }

  private static GenericKubernetesResource resource(String name, Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion("upgrade.inplace.dev/v1alpha1");
    r.setKind("WorkersUpgrade");
    r.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(NAMESPACE).build());
    r.setAdditionalProperty("spec", spec);
    return r;
  }

}
