package dev.inplace.worker.crd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * deploy/crds/ holds the CRDs generated from these classes (crd-generator-maven-plugin writes them
 * to target/classes/META-INF/fabric8/ at process-classes). After changing a CR class, refresh the
 * committed copies with:
 *
 * <pre>mvn -B -o -pl worker -am test -Dtest=CrdDriftTest -Dsurefire.failIfNoSpecifiedTests=false -Dinplace.updateCrds=true</pre>
 */
class CrdDriftTest {
  private static final Path DEPLOY = Path.of("..", "deploy", "crds");

  private static String generated(String resource) throws IOException {
    try (InputStream in = CrdDriftTest.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new AssertionError(resource + " was not generated");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static Path committed(String resource) {
    String name = resource.substring(resource.lastIndexOf('/') + 1).replace("-v1.yml", ".yaml");
    return DEPLOY.resolve(name);
  }

  @Test
  void theCommittedCrdsAreTheGeneratedOnes() throws IOException {
    boolean update = Boolean.getBoolean("inplace.updateCrds");
    for (String resource : InplaceCrds.CRD_RESOURCES) {
      String generated = generated(resource);
      Path file = committed(resource);
      if (update) {
        Files.createDirectories(DEPLOY);
        Files.writeString(file, generated);
      }
      assertTrue(Files.exists(file), file + " is missing; run with -Dinplace.updateCrds=true");
      assertEquals(generated, Files.readString(file),
          file + " differs from the CRD generated from the classes; refresh it with -Dinplace.updateCrds=true");
    }
  }

  @Test
  void bothUpgradeKindsHaveTheirNamesPrinterColumnsAndStatusSubresource() {
    List<CustomResourceDefinition> crds = InplaceCrds.definitions().subList(0, 2);
    assertEquals(List.of("ControlPlaneUpgrade", "WorkersUpgrade"), crds.stream().map(c -> c.getSpec().getNames().getKind()).toList());
    assertEquals(List.of(List.of("icpu"), List.of("iwu")), crds.stream().map(c -> c.getSpec().getNames().getShortNames()).toList());
    for (CustomResourceDefinition crd : crds) {
      assertEquals(InplaceCrds.GROUP, crd.getSpec().getGroup());
      assertEquals("Namespaced", crd.getSpec().getScope());
      var version = crd.getSpec().getVersions().get(0);
      assertEquals(InplaceCrds.VERSION, version.getName());
      assertTrue(version.getSubresources().getStatus() != null, "status subresource");
      assertTrue(version.getAdditionalPrinterColumns().stream().map(CustomResourceColumnDefinition::getName).toList()
          .containsAll(List.of("Cluster", "Version", "Phase", "Upgraded", "Age")));
      var spec = version.getSchema().getOpenAPIV3Schema().getProperties().get("spec");
      assertEquals(UpgradeSpec.VERSION_PATTERN, spec.getProperties().get("version").getPattern());
      assertTrue(spec.getRequired().containsAll(List.of("clusterName", "version", "releaseCatalogue", "ssh")));
    }
    var workers = crds.get(1).getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("spec");
    assertTrue(workers.getProperties().get("maxUnavailable").getXKubernetesIntOrString());
    assertEquals(1, workers.getProperties().get("maxUnavailable").getXKubernetesValidations().size());
  }

  @Test
  void theHostProfileKindIsClusterScopedSoOnlyClusterAdministratorsWriteOne() {
    CustomResourceDefinition crd = InplaceCrds.definitions().get(2);
    assertEquals(InplaceHostProfile.KIND, crd.getSpec().getNames().getKind());
    assertEquals(List.of("ihp"), crd.getSpec().getNames().getShortNames());
    assertEquals("Cluster", crd.getSpec().getScope());
    var spec = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("spec");
    assertEquals(List.of("agentService", "backupDir", "binDir", "imagesDir", "serverService", "stagingDir"),
        spec.getProperties().keySet().stream().sorted().toList());
  }
}
