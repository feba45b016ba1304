package dev.inplace.activities.capi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.kube.KubeClients;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkOutcome;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarksRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarksResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineVersionRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineVersionResult;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.failure.ApplicationFailure;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true, https = false)
class ClusterApiActivitiesImplTest {
  KubernetesMockServer server;
  KubernetesClient client;

  private ClusterApiActivitiesImpl activities;

  @BeforeEach
  void setUp() {
    activities = new ClusterApiActivitiesImpl(new KubeClients(client));
    client
        .genericKubernetesResources(CapiResources.MACHINE)
        .inNamespace("capi-system")
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion("cluster.x-k8s.io/v1beta2")
                .withKind("Machine")
                .withNewMetadata()
                .withNamespace("capi-system")
                .withName("m1")
                .endMetadata()
                .withAdditionalProperties(
                    Map.of(
                        "spec",
                        Map.of("clusterName", "c1", "version", "v1.30.5+k3s1")))
                .build())
        .create();
  }

  private Map<?, ?> storedSpec() {
    GenericKubernetesResource machine =
        client
            .genericKubernetesResources(CapiResources.MACHINE)
            .inNamespace("capi-system")
            .withName("m1")
            .get();
    return (Map<?, ?>) machine.getAdditionalProperties().get("spec");
  }

  @Test
  void recordMachineVersionPatchesOnceAndIsANoOpTheSecondTime() {
    MachineVersionRequest request = new MachineVersionRequest("capi-system", "m1", "v1.31.2+k3s1");

    MachineVersionResult first = activities.recordMachineVersion(request);
    String resourceVersion =
        client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("capi-system")
            .withName("m1").get().getMetadata().getResourceVersion();
    MachineVersionResult second = activities.recordMachineVersion(request);

    assertEquals(new MachineVersionResult("v1.30.5+k3s1", true), first);
    assertEquals(new MachineVersionResult("v1.31.2+k3s1", false), second);
    assertEquals("v1.31.2+k3s1", storedSpec().get("version"));
    assertEquals("c1", storedSpec().get("clusterName"), "the merge patch keeps other fields");
    assertEquals(
        resourceVersion,
        client.genericKubernetesResources(CapiResources.MACHINE).inNamespace("capi-system")
            .withName("m1").get().getMetadata().getResourceVersion(),
        "the second call wrote nothing");
  }

  @Test
  void missingMachineFailsWithMachineNotFound() {
    ApplicationFailure failure =
        assertThrows(
            ApplicationFailure.class,
            () ->
                activities.recordMachineVersion(
                    new MachineVersionRequest("capi-system", "ghost", "v1.31.2")));

    assertEquals(UpgradeFailures.MACHINE_NOT_FOUND, failure.getType());
    assertTrue(failure.isNonRetryable());
    assertTrue(failure.getOriginalMessage().contains("capi-system/ghost"));
    assertFalse(failure.getOriginalMessage().isBlank());
  }

  @Test
  void markMachineUpgradingAddsThenRemovesSkipRemediationOnceEach() {
    String path = "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-system/machines/m1";
    RequestLog sent = new RequestLog();
    KubernetesClient recording = sent.client(client);
    activities = new ClusterApiActivitiesImpl(new KubeClients(recording));

    MachineMarkResult add = activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", true));
    MachineMarkResult addAgain =
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", true));
    List<String> addPatches = sent.patches();
    String marked = annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION);

    MachineMarkResult remove =
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", false));
    MachineMarkResult removeAgain =
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", false));
    List<String> removePatches = sent.patches();

    assertEquals(new MachineMarkResult(true), add);
    assertEquals(new MachineMarkResult(false), addAgain);
    assertEquals(
        List.of(
            "PATCH "
                + path
                + " {\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/skip-remediation\":\"\"}}}"),
        addPatches);
    assertEquals("", marked);
    assertEquals(new MachineMarkResult(true), remove);
    assertEquals(new MachineMarkResult(false), removeAgain, "a null value counts as removed");
    assertEquals(
        List.of(
            "PATCH "
                + path
                + " {\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/skip-remediation\":null}}}"),
        removePatches);
    assertNull(annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION));
    recording.close();
  }

  @Test
  void aMarkWithAnOwnerCarriesItAndOnlyThatOwnerRemovesIt() {
    String run = "node-upgrade/capi-system/m1/v1.31.2+k3s1";

    assertEquals(new MachineMarkResult(true),
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", true, run)));
    assertEquals(run, annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION));

    assertEquals(new MachineMarkResult(false),
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", false, "another-run")));
    assertEquals(run, annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION), "another run's unmark left it");

    assertEquals(new MachineMarkResult(true),
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", false, run)));
    assertNull(annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION));
  }

  @Test
  void anOperatorsMarkSurvivesARunThatMarksAndUnmarks() {
    String run = "workers-upgrade/capi-system/c1/md-0/v1.31.2+k3s1";
    activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", true, null)); // the operator's, no owner

    assertEquals(new MachineMarkResult(false),
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", true, run)));
    assertEquals(new MachineMarkResult(false),
        activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "m1", false, run)));

    assertEquals("", annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION), "the operator's mark stays");
  }

  @Test
  void markMissingMachineFailsWithMachineNotFound() {
    ApplicationFailure failure =
        assertThrows(
            ApplicationFailure.class,
            () -> activities.markMachineUpgrading(new MachineMarkRequest("capi-system", "ghost", true)));

    assertEquals(UpgradeFailures.MACHINE_NOT_FOUND, failure.getType());
    assertEquals("Machine capi-system/ghost not found", failure.getOriginalMessage());
  }

  @Test
  void aBatchOfMarksMarksEachMachineInOrderAndAMissingOneFailsAlone() {
    String run = "workers-upgrade/capi-system/c1/md-0/v1.31.2+k3s1";

    MachineMarksResult result = activities.markMachines(new MachineMarksRequest(List.of(
        new MachineMarkRequest("capi-system", "ghost", true, run),
        new MachineMarkRequest("capi-system", "m1", true, run),
        new MachineMarkRequest("capi-system", "m1", true, run))));

    assertEquals(List.of(
            new MachineMarkOutcome("ghost", false, UpgradeFailures.MACHINE_NOT_FOUND, "Machine capi-system/ghost not found"),
            new MachineMarkOutcome("m1", true, null, null),
            new MachineMarkOutcome("m1", false, null, null)),
        result.outcomes());
    assertEquals(run, annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION));
  }

  @Test
  void aBatchOfMoreThanFiftyMarksIsRefusedBeforeAnyIsSet() {
    List<MachineMarkRequest> marks = java.util.stream.IntStream.range(0, ClusterApiActivities.MAX_MARKS_PER_BATCH + 1)
        .mapToObj(i -> new MachineMarkRequest("capi-system", "m1", true, "run"))
        .toList();

    ApplicationFailure failure =
        assertThrows(ApplicationFailure.class, () -> activities.markMachines(new MachineMarksRequest(marks)));

    assertEquals(UpgradeFailures.INVALID_REQUEST, failure.getType());
    assertNull(annotation(ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION));
  }

  private String annotation(String key) {
    Map<String, String> annotations =
        client
            .genericKubernetesResources(CapiResources.MACHINE)
            .inNamespace("capi-system")
            .withName("m1")
            .get()
            .getMetadata()
            .getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }
}
