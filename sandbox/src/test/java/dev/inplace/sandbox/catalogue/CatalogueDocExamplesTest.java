package dev.inplace.sandbox.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.RunIntake;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The examples of docs/catalogue.md, each put in a ConfigMap and every release of it admitted by the
 * worker's own intake (parser, catalogue rules, source policy) with the worker settings the page
 * names, so the page cannot drift from the code.
 */
@EnableKubernetesMockClient(crud = true)
class CatalogueDocExamplesTest {
  private static final String NS = "fleet";
  /** The settings docs/catalogue.md says its examples' worker has. */
  private static final ArtifactSourcePolicy DOCUMENTED_WORKER = new ArtifactSourcePolicy(
      plus(ArtifactRules.RELEASE_HOSTS, "quay.io"), Path.of("/srv/inplace-mirror"), ArtifactSourcePolicy.DEFAULT_MAX_BYTES);

  KubernetesClient client;

  private static Set<String> plus(Set<String> hosts, String host) {
    Set<String> all = new HashSet<>(hosts);
    all.add(host);
    return all;
  }

  @Test
  void thePageHasAnExampleForEachDistributionAndForKairosHosts() throws Exception {
    Set<String> covered = CatalogueDocs.examples().stream()
        .flatMap(json -> ReleaseCatalogue.parse(json, "docs/catalogue.md").releases().stream())
        .map(r -> r.os() == HostOs.KAIROS ? "KAIROS" : r.distribution().name())
        .collect(Collectors.toSet());
    assertEquals(Set.of("K3S", "KUBEADM", "K0S", "KAIROS"), covered);
  }

  @Test
  void everyReleaseOfEveryExampleIsAdmittedByTheWorkersIntakeFromAConfigMap() throws Exception {
    List<String> examples = CatalogueDocs.examples();
    RunIntake intake = new RunIntake(client, DOCUMENTED_WORKER);
    int admitted = 0;
    for (int i = 0; i < examples.size(); i++) {
      String name = "example-" + i;
      client.resource(CatalogueReference.configMap(NS, name, examples.get(i))).create();
      for (ReleaseCatalogue.Release r : ReleaseCatalogue.parse(examples.get(i), name).releases()) {
        assertEquals(r, intake.release(NS, name, CatalogueReference.DEFAULT_KEY, r.version(), r.distribution(), r.arch(), r.os()),
            name + ": " + r.version());
        admitted++;
      }
    }
    assertTrue(admitted >= 5, "releases admitted: " + admitted);
  }

  @Test
  void theMirrorAndRegistryExamplesNeedTheWorkerSettingsThePageNames() throws Exception {
    RunIntake defaults = new RunIntake(client, new ArtifactSourcePolicy(ArtifactRules.RELEASE_HOSTS, null,
        ArtifactSourcePolicy.DEFAULT_MAX_BYTES));
    List<String> examples = CatalogueDocs.examples();
    for (int i = 0; i < examples.size(); i++) {
      client.resource(CatalogueReference.configMap(NS, "example-" + i, examples.get(i))).create();
    }
    int kubeadm = indexOf(examples, Distribution.KUBEADM, HostOs.STANDARD);
    IntakeRefusal mirror = assertThrows(IntakeRefusal.class, () -> defaults.release(NS, "example-" + kubeadm,
        CatalogueReference.DEFAULT_KEY, "v1.31.2", Distribution.KUBEADM, "amd64", HostOs.STANDARD));
    assertTrue(mirror.getMessage().contains("this worker has no mirror directory"), mirror.getMessage());
    int kairos = indexOf(examples, Distribution.K3S, HostOs.KAIROS);
    IntakeRefusal registry = assertThrows(IntakeRefusal.class, () -> defaults.release(NS, "example-" + kairos,
        CatalogueReference.DEFAULT_KEY, "v1.31.2+k3s1", Distribution.K3S, "amd64", HostOs.KAIROS));
    assertTrue(registry.getMessage().contains("registry quay.io is not in the allowed artifact hosts"), registry.getMessage());
  }

  private static int indexOf(List<String> examples, Distribution distribution, HostOs os) {
    for (int i = 0; i < examples.size(); i++) {
      if (ReleaseCatalogue.parse(examples.get(i), "example").releases().stream()
          .anyMatch(r -> r.distribution() == distribution && r.os() == os)) {
        return i;
      }
    }
    throw new AssertionError("no " + distribution + " " + os + " example");
  }
}
