package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.CapiFixtures.NS;
import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static dev.inplace.workflows.api.ClusterApiActivities.PAUSED_ANNOTATION;
import static dev.inplace.workflows.api.ClusterApiActivities.PAUSED_BY_ANNOTATION;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.kube.KubeClients;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.ControlPlaneVersionRequest;
import dev.inplace.workflows.api.ClusterApiActivities.PoolVersionRequest;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.failure.ApplicationFailure;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The CR-mode bookkeeping patches: their exact bodies and order, and that a re-run after a crash at
 * any point converges without repeating a patch.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class VersionBookkeepingTest {
  private static final String OLD = "v1.30.4+k3s1";
  private static final String NEW = "v1.31.2+k3s1";
  private static final String OWNER = "control-plane-upgrade/capi-system/c1/v1.31.2+k3s1";
  private static final ObjectRef KCP =
      new ObjectRef("controlplane.cluster.x-k8s.io", "KThreesControlPlane", "c1-control-plane");
  private static final String KCP_PATH =
      "/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/capi-system/kthreescontrolplanes/"
          + "c1-control-plane";
  private static final String MD_PATH =
      "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-system/machinedeployments/c1-md-0";
  private static final String NEWEST_MS_PATH =
      "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-system/machinesets/c1-md-0-8c6b4";
  private static final String PAUSE =
      "{\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/paused\":\"\","
          + "\"upgrade.inplace.dev/paused-by\":\""
          + OWNER
          + "\"}}}";
  private static final String UNPAUSE =
      "{\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/paused\":null,"
          + "\"upgrade.inplace.dev/paused-by\":null}}}";
  private static final String SPEC_VERSION = "{\"spec\":{\"version\":\"" + NEW + "\"}}";
  private static final String TEMPLATE_VERSION =
      "{\"spec\":{\"template\":{\"spec\":{\"version\":\"" + NEW + "\"}}}}";

  KubernetesMockServer server;
  KubernetesClient client;

  private final RequestLog sent = new RequestLog();
  private KubernetesClient recording;
  private ClusterApiActivitiesImpl activities;

  @BeforeEach
  void setUp() {
    recording = sent.client(client); // only what the activities send is recorded
    activities = new ClusterApiActivitiesImpl(new KubeClients(recording));
    CapiFixtures.load(client, "k3s-cluster.yaml");
  }

  @AfterEach
  void tearDown() {
    recording.close();
  }

  // ------------------------------------------------------------------ control plane

  @Test
  void controlPlanePausesThenSetsVersionThenUnpausesInThatOrder() {
    String observedVersion =
        resourceVersion(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane");

    BookkeepingResult result = recordControlPlane();
    List<RequestLog.Sent> requests = sent.take();

    assertEquals(
        List.of("GET " + KCP_PATH, "PATCH " + KCP_PATH, "PATCH " + KCP_PATH, "PATCH " + KCP_PATH),
        requests.stream().map(r -> r.method() + " " + r.path()).toList(),
        "one read, then the patches");
    assertEquals(
        observedVersion,
        RequestLog.guard(requests.get(1)),
        "the pause is guarded by what was read");
    assertEquals(
        List.of(
            "PATCH " + KCP_PATH + " if-unchanged " + PAUSE,
            "PATCH " + KCP_PATH + " " + SPEC_VERSION,
            "PATCH " + KCP_PATH + " " + UNPAUSE),
        RequestLog.patches(requests));
    assertEquals(
        List.of(
            "pause KThreesControlPlane capi-system/c1-control-plane (upgrade.inplace.dev/paused-by="
                + OWNER
                + ")",
            "KThreesControlPlane capi-system/c1-control-plane spec.version " + OLD + " -> " + NEW,
            "unpause KThreesControlPlane capi-system/c1-control-plane"),
        result.patches());
    GenericKubernetesResource stored = get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane");
    assertEquals(NEW, ResourceFields.string(stored, "spec", "version"));
    assertEquals(3L, ResourceFields.number(stored, 0, "spec", "replicas"), "other fields kept");
    assertNotPaused(stored);
  }

  @Test
  void aRunPausesTheControlPlaneFirstAndRecordingTheVersionUnpausesIt() {
    BookkeepingResult paused = activities.pauseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));
    assertEquals(List.of("PATCH " + KCP_PATH + " if-unchanged " + PAUSE), sent.patches());
    assertEquals(1, paused.patches().size());

    BookkeepingResult pausedAgain = activities.pauseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));
    assertEquals(List.of(), pausedAgain.patches(), "idempotent: a retry finds its own pause");
    assertEquals(List.of(), sent.patches());

    recordControlPlane();
    assertEquals(
        List.of("PATCH " + KCP_PATH + " " + SPEC_VERSION, "PATCH " + KCP_PATH + " " + UNPAUSE),
        sent.patches(),
        "the version under the run's own pause, then unpaused");
  }

  @Test
  void aControlPlanePausedBySomeoneElseIsNotPausedAgain() {
    CapiFixtures.annotate(client, CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane", Map.of(PAUSED_ANNOTATION, ""));
    sent.take();

    BookkeepingResult result = activities.pauseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));

    assertEquals(List.of(), result.patches());
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void releasingRemovesOnlyThisRunsPauseAndLeavesTheVersion() {
    activities.pauseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));
    sent.take();

    BookkeepingResult released = activities.releaseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));

    assertEquals(List.of("PATCH " + KCP_PATH + " " + UNPAUSE), sent.patches());
    assertEquals(List.of("unpause KThreesControlPlane capi-system/c1-control-plane"), released.patches());
    GenericKubernetesResource stored = get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane");
    assertNotPaused(stored);
    assertEquals(OLD, ResourceFields.string(stored, "spec", "version"), "the version is not recorded");

    BookkeepingResult again = activities.releaseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));
    assertEquals(List.of(), again.patches(), "idempotent");
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void releasingLeavesSomeoneElsesPause() {
    CapiFixtures.annotate(client, CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane",
        Map.of(PAUSED_ANNOTATION, "", PAUSED_BY_ANNOTATION, "clusterctl-move"));
    sent.take();

    BookkeepingResult released = activities.releaseControlPlane(new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));

    assertEquals(List.of(), released.patches());
    assertEquals(List.of(), sent.patches());
    assertEquals("clusterctl-move",
        ResourceFields.annotation(get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane"), PAUSED_BY_ANNOTATION));
  }

  @Test
  void controlPlaneSecondRunPatchesNothing() {
    recordControlPlane();
    sent.take();

    BookkeepingResult again = recordControlPlane();

    assertEquals(List.of(), again.patches());
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void controlPlaneRerunAfterCrashWhilePausedSkipsThePause() {
    CapiFixtures.annotate(
        client,
        CapiResources.KTHREES_CONTROL_PLANE,
        "c1-control-plane",
        Map.of(PAUSED_ANNOTATION, "", PAUSED_BY_ANNOTATION, OWNER));
    sent.take();

    BookkeepingResult result = recordControlPlane();

    assertEquals(
        List.of("PATCH " + KCP_PATH + " " + SPEC_VERSION, "PATCH " + KCP_PATH + " " + UNPAUSE),
        sent.patches());
    assertEquals(2, result.patches().size());
    assertNotPaused(get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane"));
  }

  @Test
  void controlPlaneRerunAfterCrashBeforeUnpauseOnlyUnpauses() {
    recordControlPlane();
    CapiFixtures.annotate(
        client,
        CapiResources.KTHREES_CONTROL_PLANE,
        "c1-control-plane",
        Map.of(PAUSED_ANNOTATION, "", PAUSED_BY_ANNOTATION, OWNER));
    sent.take();

    BookkeepingResult result = recordControlPlane();

    assertEquals(List.of("PATCH " + KCP_PATH + " " + UNPAUSE), sent.patches());
    assertEquals(
        List.of("unpause KThreesControlPlane capi-system/c1-control-plane"), result.patches());
  }

  @Test
  void controlPlanePausedBySomeoneElseKeepsThatPauseAndStillGetsTheVersion() {
    CapiFixtures.annotate(
        client,
        CapiResources.KTHREES_CONTROL_PLANE,
        "c1-control-plane",
        Map.of(PAUSED_ANNOTATION, "", PAUSED_BY_ANNOTATION, "clusterctl-move"));
    sent.take();

    BookkeepingResult result = recordControlPlane();

    assertEquals(List.of("PATCH " + KCP_PATH + " " + SPEC_VERSION), sent.patches());
    assertEquals(1, result.patches().size());
    GenericKubernetesResource stored = get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane");
    assertEquals(NEW, ResourceFields.string(stored, "spec", "version"));
    assertEquals("", ResourceFields.annotation(stored, PAUSED_ANNOTATION));
    assertEquals("clusterctl-move", ResourceFields.annotation(stored, PAUSED_BY_ANNOTATION));
  }

  @Test
  void controlPlanePausedWithoutOwnerCountsAsSomeoneElses() {
    CapiFixtures.annotate(
        client,
        CapiResources.KTHREES_CONTROL_PLANE,
        "c1-control-plane",
        Map.of(PAUSED_ANNOTATION, ""));
    sent.take();

    recordControlPlane();

    assertEquals(List.of("PATCH " + KCP_PATH + " " + SPEC_VERSION), sent.patches());
    assertEquals(
        "",
        ResourceFields.annotation(
            get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane"), PAUSED_ANNOTATION));
  }

  @Test
  void controlPlaneAlreadyAtVersionIsLeftAlone() {
    BookkeepingResult result =
        activities.recordControlPlaneVersion(new ControlPlaneVersionRequest(NS, KCP, OLD, OWNER));

    assertEquals(List.of(), result.patches());
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void aConflictOnThePauseIsRetryableAndTheRetryFinishesTheJob() {
    server
        .expect()
        .patch()
        .withPath(KCP_PATH)
        .andReturn(
            409,
            "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\",\"message\":\"the"
                + " object has been modified\",\"code\":409}")
        .once();

    ApplicationFailure failure =
        assertFailure(UpgradeFailures.KUBERNETES_API_ERROR, this::recordControlPlane);
    assertFalse(failure.isNonRetryable());
    assertEquals(OLD, version(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane"));

    assertEquals(3, recordControlPlane().patches().size());
    assertEquals(NEW, version(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane"));
  }

  @Test
  void thePauseIsRefusedWithARetryableConflictWhenTheObjectChangedSinceItWasRead() {
    GenericKubernetesResource stale = get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane");
    CapiFixtures.annotate(
        client, CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane", Map.of("note", "changed"));
    CapiObjectStore store = new CapiObjectStore(client);

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.KUBERNETES_API_ERROR,
            () ->
                store.patch(
                    CapiResources.KTHREES_CONTROL_PLANE,
                    stale,
                    VersionBookkeeping.pausePatch(stale.getMetadata().getResourceVersion(), OWNER),
                    UpgradeFailures.INVALID_REQUEST));

    assertFalse(failure.isNonRetryable());
    assertTrue(
        failure.getOriginalMessage().startsWith("Kubernetes API HTTP 409"),
        failure.getOriginalMessage());
    assertFalse(
        ResourceFields.hasAnnotation(
            get(CapiResources.KTHREES_CONTROL_PLANE, "c1-control-plane"), PAUSED_ANNOTATION));
  }

  @Test
  void unsupportedControlPlaneKindIsRefusedBeforeAnyRequest() {
    ObjectRef rke = new ObjectRef("controlplane.cluster.x-k8s.io", "RKE2ControlPlane", "rke");

    assertFailure(
        UpgradeFailures.INVALID_REQUEST,
        () ->
            activities.recordControlPlaneVersion(
                new ControlPlaneVersionRequest(NS, rke, NEW, OWNER)));
    assertEquals(List.of(), sent.take());
  }

  @Test
  void missingControlPlaneObjectIsInvalidRequest() {
    ObjectRef ghost = new ObjectRef(KCP.apiGroup(), KCP.kind(), "ghost");

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.INVALID_REQUEST,
            () ->
                activities.recordControlPlaneVersion(
                    new ControlPlaneVersionRequest(NS, ghost, NEW, OWNER)));
    assertEquals("KThreesControlPlane capi-system/ghost not found", failure.getOriginalMessage());
  }

  // ------------------------------------------------------------------ worker pools

  @Test
  void poolPausesSetsNewestMachineSetThenDeploymentThenUnpauses() {
    BookkeepingResult result = recordPool();

    assertEquals(
        List.of(
            "PATCH " + MD_PATH + " if-unchanged " + PAUSE,
            "PATCH " + NEWEST_MS_PATH + " " + TEMPLATE_VERSION,
            "PATCH " + MD_PATH + " " + TEMPLATE_VERSION,
            "PATCH " + MD_PATH + " " + UNPAUSE),
        sent.patches());
    assertEquals(
        List.of(
            "pause MachineDeployment capi-system/c1-md-0 (upgrade.inplace.dev/paused-by="
                + OWNER
                + ")",
            "MachineSet capi-system/c1-md-0-8c6b4 spec.template.spec.version " + OLD + " -> " + NEW,
            "MachineDeployment capi-system/c1-md-0 spec.template.spec.version "
                + OLD
                + " -> "
                + NEW,
            "unpause MachineDeployment capi-system/c1-md-0"),
        result.patches());
    GenericKubernetesResource md = get(CapiResources.MACHINE_DEPLOYMENT, "c1-md-0");
    assertEquals(NEW, ResourceFields.string(md, "spec", "template", "spec", "version"));
    assertEquals(
        "KThreesConfigTemplate",
        ResourceFields.string(md, "spec", "template", "spec", "bootstrap", "configRef", "kind"),
        "the merge patch keeps the rest of the template");
    assertNotPaused(md);
    assertEquals(
        NEW,
        ResourceFields.string(
            get(CapiResources.MACHINE_SET, "c1-md-0-8c6b4"),
            "spec",
            "template",
            "spec",
            "version"));
    assertEquals(
        "v1.30.3+k3s1",
        ResourceFields.string(
            get(CapiResources.MACHINE_SET, "c1-md-0-5d9f7"), "spec", "template", "spec", "version"),
        "older MachineSets are history and stay as they are");
  }

  @Test
  void aK0sWorkerConfigTemplateThatPinsAVersionGetsTheNewOneBeforeTheMachineSet() {
    useK0sWorkerConfigTemplate("c1-md-0-k0s", OLD);

    BookkeepingResult result = recordPool();

    String templatePath =
        "/apis/bootstrap.cluster.x-k8s.io/v1beta2/namespaces/capi-system/k0sworkerconfigtemplates/c1-md-0-k0s";
    assertEquals(
        List.of(
            "PATCH " + MD_PATH + " if-unchanged " + PAUSE,
            "PATCH " + templatePath + " " + TEMPLATE_VERSION,
            "PATCH " + NEWEST_MS_PATH + " " + TEMPLATE_VERSION,
            "PATCH " + MD_PATH + " " + TEMPLATE_VERSION,
            "PATCH " + MD_PATH + " " + UNPAUSE),
        sent.patches());
    assertTrue(
        result.patches().contains(
            "K0sWorkerConfigTemplate capi-system/c1-md-0-k0s spec.template.spec.version " + OLD + " -> " + NEW),
        result.patches().toString());
    assertEquals(
        NEW,
        ResourceFields.string(
            get(CapiResources.K0S_WORKER_CONFIG_TEMPLATE, "c1-md-0-k0s"), "spec", "template", "spec", "version"));
    sent.take();
    recordPool();
    assertEquals(List.of(), sent.patches(), "a second run patches nothing");
  }

  @Test
  void aK0sWorkerConfigTemplateLeavingTheVersionToTheMachineIsNotPatched() {
    useK0sWorkerConfigTemplate("c1-md-0-k0s", null);

    recordPool();

    assertTrue(sent.patches().stream().noneMatch(p -> p.contains("k0sworkerconfigtemplates")), sent.patches().toString());
    assertEquals(
        null,
        ResourceFields.string(
            get(CapiResources.K0S_WORKER_CONFIG_TEMPLATE, "c1-md-0-k0s"), "spec", "template", "spec", "version"));
  }

  /** Points c1-md-0's bootstrap at a K0sWorkerConfigTemplate, pinning {@code version} when not null. */
  private void useK0sWorkerConfigTemplate(String name, String version) {
    Map<String, Object> templateSpec = new HashMap<>();
    templateSpec.put("k0sInstallDir", "/usr/local/bin");
    if (version != null) {
      templateSpec.put("version", version);
    }
    GenericKubernetesResource template = new GenericKubernetesResource();
    template.setApiVersion("bootstrap.cluster.x-k8s.io/v1beta2");
    template.setKind("K0sWorkerConfigTemplate");
    template.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(NS).build());
    template.setAdditionalProperties(Map.of("spec", Map.of("template", Map.of("spec", templateSpec))));
    client.genericKubernetesResources(CapiResources.K0S_WORKER_CONFIG_TEMPLATE).inNamespace(NS).resource(template).create();
    client
        .genericKubernetesResources(CapiResources.MACHINE_DEPLOYMENT)
        .inNamespace(NS)
        .withName("c1-md-0")
        .edit(
            md -> {
              @SuppressWarnings("unchecked")
              Map<String, Object> spec = (Map<String, Object>) md.getAdditionalProperties().get("spec");
              @SuppressWarnings("unchecked")
              Map<String, Object> machineSpec =
                  (Map<String, Object>) ((Map<String, Object>) spec.get("template")).get("spec");
              machineSpec.put(
                  "bootstrap",
                  Map.of("configRef", Map.of("apiGroup", "bootstrap.cluster.x-k8s.io", "kind", "K0sWorkerConfigTemplate", "name", name)));
              return md;
            });
  }

  @Test
  void poolSecondRunPatchesNothing() {
    recordPool();
    sent.take();

    assertEquals(List.of(), recordPool().patches());
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void poolRerunAfterCrashBetweenMachineSetAndDeploymentFinishesFromThere() {
    CapiFixtures.annotate(
        client,
        CapiResources.MACHINE_DEPLOYMENT,
        "c1-md-0",
        Map.of(PAUSED_ANNOTATION, "", PAUSED_BY_ANNOTATION, OWNER));
    client
        .genericKubernetesResources(CapiResources.MACHINE_SET)
        .inNamespace(NS)
        .withName("c1-md-0-8c6b4")
        .edit(
            ms -> {
              @SuppressWarnings("unchecked")
              Map<String, Object> spec =
                  (Map<String, Object>)
                      ((Map<String, Object>) ms.getAdditionalProperties().get("spec"))
                          .get("template");
              @SuppressWarnings("unchecked")
              Map<String, Object> templateSpec =
                  new HashMap<>((Map<String, Object>) spec.get("spec"));
              templateSpec.put("version", NEW);
              spec.put("spec", templateSpec);
              return ms;
            });
    sent.take();

    BookkeepingResult result = recordPool();

    assertEquals(
        List.of("PATCH " + MD_PATH + " " + TEMPLATE_VERSION, "PATCH " + MD_PATH + " " + UNPAUSE),
        sent.patches());
    assertEquals(2, result.patches().size());
  }

  @Test
  void poolPausedBySomeoneElseKeepsThatPause() {
    CapiFixtures.annotate(
        client,
        CapiResources.MACHINE_DEPLOYMENT,
        "c1-md-0",
        Map.of(PAUSED_ANNOTATION, "", PAUSED_BY_ANNOTATION, "someone"));
    sent.take();

    recordPool();

    assertEquals(
        List.of(
            "PATCH " + NEWEST_MS_PATH + " " + TEMPLATE_VERSION,
            "PATCH " + MD_PATH + " " + TEMPLATE_VERSION),
        sent.patches());
    assertEquals(
        "someone",
        ResourceFields.annotation(
            get(CapiResources.MACHINE_DEPLOYMENT, "c1-md-0"), PAUSED_BY_ANNOTATION));
  }

  @Test
  void poolWithoutMachineSetOnlyGetsItsTemplate() {
    String path =
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-system/machinedeployments/c1-md-1";

    activities.recordWorkerPoolVersion(new PoolVersionRequest(NS, "c1-md-1", NEW, OWNER));

    assertEquals(
        List.of(
            "PATCH " + path + " if-unchanged " + PAUSE,
            "PATCH " + path + " " + TEMPLATE_VERSION,
            "PATCH " + path + " " + UNPAUSE),
        sent.patches());
  }

  @Test
  void missingMachineDeploymentIsInvalidRequest() {
    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.INVALID_REQUEST,
            () ->
                activities.recordWorkerPoolVersion(
                    new PoolVersionRequest(NS, "ghost", NEW, OWNER)));
    assertEquals("MachineDeployment capi-system/ghost not found", failure.getOriginalMessage());
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void blankOwnerIsRefused() {
    assertFailure(
        UpgradeFailures.INVALID_REQUEST,
        () -> activities.recordWorkerPoolVersion(new PoolVersionRequest(NS, "c1-md-0", NEW, " ")));
  }

  // ------------------------------------------------------------------ helpers

  private BookkeepingResult recordControlPlane() {
    return activities.recordControlPlaneVersion(
        new ControlPlaneVersionRequest(NS, KCP, NEW, OWNER));
  }

  private BookkeepingResult recordPool() {
    return activities.recordWorkerPoolVersion(new PoolVersionRequest(NS, "c1-md-0", NEW, OWNER));
  }

  private GenericKubernetesResource get(ResourceDefinitionContext type, String name) {
    return CapiFixtures.get(client, type, name);
  }

  private String version(ResourceDefinitionContext type, String name) {
    return ResourceFields.string(get(type, name), "spec", "version");
  }

  private String resourceVersion(ResourceDefinitionContext type, String name) {
    return get(type, name).getMetadata().getResourceVersion();
  }

  /** The mock stores a merge-patched null instead of removing the key: null counts as absent. */
  private static void assertNotPaused(GenericKubernetesResource object) {
    assertFalse(ResourceFields.hasAnnotation(object, PAUSED_ANNOTATION), "still paused");
    assertFalse(ResourceFields.hasAnnotation(object, PAUSED_BY_ANNOTATION), "owner left behind");
  }
}
