package dev.inplace.worker.intake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.activities.capi.CapiResources;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.HostLayoutSpec;
import dev.inplace.worker.crd.InplaceHostProfile;
import dev.inplace.worker.crd.UpgradeSpec;
import io.fabric8.generator.annotation.Default;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class RunIntakeTest {
  private static final String TARGET = "v1.31.2+k3s1";
  KubernetesMockServer server;
  KubernetesClient client;

  private RunIntake intake(ArtifactSourcePolicy policy) {
    return new RunIntake(client, policy);
  }

  private void catalogue(String source, String installPath, long size) {
    client.configMaps().inNamespace("fleet").resource(new ConfigMapBuilder()
        .withNewMetadata().withName("releases").endMetadata()
        .addToData("catalogue.json", """
            {"releases":[{"version":"%s","distribution":"K3S","arch":"amd64","artifacts":[
              {"name":"k3s","kind":"BINARY","source":"%s","sha256":"%s",
               "sizeBytes":%d,"installPath":"%s","mode":"0755"}]}]}""".formatted(TARGET, source, "ab".repeat(32),
            size, installPath))
        .build()).createOr(c -> c.update());
  }

  private IntakeRefusal refusal(ArtifactSourcePolicy policy) {
    return assertThrows(IntakeRefusal.class,
        () -> intake(policy).release("fleet", "releases", "catalogue.json", TARGET, Distribution.K3S, "amd64"));
  }

  @Test
  void aMissingSecretOrDataKeyIsSecretNotFound() throws Exception {
    SshSettings ssh = new SshSettings("root", 22, "edge-1-ssh-key", "edge-1-known-hosts", null);
    IntakeRefusal missing = assertThrows(IntakeRefusal.class,
        () -> intake(ArtifactSourcePolicy.httpsOnly()).requireRunSecrets(new ClusterRef("fleet", "edge-1"), ssh));
    assertEquals(UpgradeFailures.SECRET_NOT_FOUND, missing.type());
    assertEquals("Secret fleet/edge-1-ssh-key (the SSH private key) not found", missing.getMessage());

    client.secrets().inNamespace("fleet").resource(new SecretBuilder().withNewMetadata().withName("edge-1-ssh-key")
        .endMetadata().addToData("wrong", "eA==").build()).create();
    IntakeRefusal noKey = assertThrows(IntakeRefusal.class,
        () -> intake(ArtifactSourcePolicy.httpsOnly()).requireRunSecrets(new ClusterRef("fleet", "edge-1"), ssh));
    assertEquals(UpgradeFailures.SECRET_NOT_FOUND, noKey.type());
    assertTrue(noKey.getMessage().endsWith("has no data key ssh-privatekey"), noKey.getMessage());
  }

  private void cluster(String name, Map<String, Object> spec) {
    GenericKubernetesResource c = new GenericKubernetesResource();
    c.setApiVersion("cluster.x-k8s.io/v1beta2");
    c.setKind("Cluster");
    c.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("fleet").build());
    c.setAdditionalProperty("spec", spec);
    client.genericKubernetesResources(CapiResources.CLUSTER).inNamespace("fleet").resource(c).create();
  }

  @Test
  void aClusterClassClusterIsRefusedAsTopologyManaged() throws Exception {
    cluster("edge-cc", Map.of("topology", Map.of("class", "k3s-edge", "version", "v1.30.6+k3s1")));
    IntakeRefusal refused = assertThrows(IntakeRefusal.class,
        () -> intake(ArtifactSourcePolicy.httpsOnly()).refuseTopologyCluster(new ClusterRef("fleet", "edge-cc")));
    assertEquals(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, refused.type());
    assertTrue(refused.getMessage().startsWith("Cluster fleet/edge-cc is managed by ClusterClass k3s-edge"
        + " (spec.topology, version v1.30.6+k3s1)"), refused.getMessage());

    cluster("edge-cc2", Map.of("topology", Map.of("classRef", Map.of("name", "k3s-v1beta2"), "version", "v1.30.6")));
    IntakeRefusal v1beta2 = assertThrows(IntakeRefusal.class,
        () -> intake(ArtifactSourcePolicy.httpsOnly()).refuseTopologyCluster(new ClusterRef("fleet", "edge-cc2")));
    assertTrue(v1beta2.getMessage().contains("ClusterClass k3s-v1beta2"), v1beta2.getMessage());
  }

  @Test
  void aClusterWithoutTopologyOrNoClusterIsNotRefusedHere() throws Exception {
    cluster("edge-1", Map.of("controlPlaneRef", Map.of("kind", "KThreesControlPlane", "name", "edge-1-cp")));
    intake(ArtifactSourcePolicy.httpsOnly()).refuseTopologyCluster(new ClusterRef("fleet", "edge-1"));
    intake(ArtifactSourcePolicy.httpsOnly()).refuseTopologyCluster(new ClusterRef("fleet", "absent"));
  }

  @Test
  void aSafeReleaseIsReturned() throws Exception {
    catalogue("https://releases.example/k3s", "/usr/local/bin/k3s", 1024);
    assertEquals(TARGET, intake(ArtifactSourcePolicy.httpsOnly())
        .release("fleet", "releases", "catalogue.json", TARGET, Distribution.K3S, "amd64").version());
  }

  @Test
  void unsafeCataloguesAreRefusedWithTheReason() {
    catalogue("http://releases.example/k3s", "/usr/local/bin/k3s", 1024);
    assertTrue(refusal(ArtifactSourcePolicy.httpsOnly()).getMessage().contains("source scheme http is not allowed"));
    catalogue("file:/var/run/secrets/kubernetes.io/serviceaccount/token", "/usr/local/bin/k3s", 0);
    IntakeRefusal token = refusal(ArtifactSourcePolicy.httpsOnly());
    assertEquals(UpgradeFailures.INVALID_REQUEST, token.type());
    assertTrue(token.getMessage().contains("no mirror directory"), token.getMessage());
    catalogue("file:/var/run/secrets/kubernetes.io/serviceaccount/token", "/usr/local/bin/k3s", 0);
    assertTrue(refusal(ArtifactSourcePolicy.mirror(Path.of("/srv/mirror"))).getMessage()
        .contains("must lie below the mirror directory /srv/mirror"));
    catalogue("https://evil.example/k3s", "/usr/local/bin/k3s", 1024);
    assertTrue(refusal(new ArtifactSourcePolicy(Set.of("releases.example"), null, 1 << 30)).getMessage()
        .contains("host evil.example is not in the allowed artifact hosts"));
    catalogue("https://releases.example/k3s", "/usr/local/bin/k3s", 3L << 30);
    assertTrue(refusal(ArtifactSourcePolicy.httpsOnly()).getMessage().contains("above the worker's limit"));
    catalogue("https://releases.example/k3s", "/etc/cron.d/k3s", 1024);
    assertTrue(refusal(ArtifactSourcePolicy.httpsOnly()).getMessage()
        .contains("install path /etc/cron.d/k3s is outside the distribution's layout"));
  }

  @Test
  void versionSkewIsOneRuleForBothDoors() {
    MachineInfo old = new MachineInfo("m", "n", NodeRole.WORKER, "10.0.0.1", "v1.29.0+k3s1", "v1.29.0+k3s1", "md");
    IntakeRefusal skew = assertThrows(IntakeRefusal.class, () -> RunIntake.checkSkew(List.of(old), TARGET));
    assertEquals(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, skew.type());
    assertTrue(skew.getMessage().contains("n runs v1.29.0+k3s1 (2 minors behind)"), skew.getMessage());
  }

  // ---- admit: what a door asked, to a run's inputs ----------------------------------------------

  private static final MachineInfo CP_0 =
      new MachineInfo("edge-1-cp-0", "cp-0", NodeRole.CONTROL_PLANE, "10.0.0.10", "v1.30.6+k3s1", "v1.30.6+k3s1", "");
  private static final MachineInfo CP_1 =
      new MachineInfo("edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.11", "v1.30.6+k3s1", "v1.30.6+k3s1", "");

  /** What both doors need in place: the three Secrets, a catalogue with the release, a Cluster. */
  private void estate(Map<String, Object> clusterSpec) {
    for (String[] s : new String[][] {{"edge-1-ssh-key", "ssh-privatekey"}, {"edge-1-known-hosts", "known_hosts"},
        {"edge-1-kubeconfig", "value"}}) {
      client.secrets().inNamespace("fleet").resource(new SecretBuilder().withNewMetadata().withName(s[0])
          .endMetadata().addToData(s[1], "eA==").build()).createOr(c -> c.update());
    }
    catalogue("https://releases.example/k3s", "/usr/local/bin/k3s", 1024);
    cluster("edge-1", clusterSpec);
  }

  private static IntakeRequest ask(IntakeRequest.Host host, IntakeRequest.Drain drain, Long ready, Long minFree,
      IntakeRequest.Window window, List<MachineInfo> machines, boolean singleNode, IntakeRequest.Recording recording) {
    return new IntakeRequest(new ClusterRef("fleet", "edge-1"), TARGET, Distribution.K3S, null, host,
        new IntakeRequest.Ssh(null, null, "edge-1-ssh-key", "edge-1-known-hosts", null), drain, ready, minFree, window,
        new IntakeRequest.Catalogue("releases", null), machines, singleNode, recording, f -> "spec." + f);
  }

  private static IntakeRequest plain(IntakeRequest.Recording recording) {
    return ask(null, null, null, null, null, List.of(CP_0, CP_1), false, recording);
  }

  @Test
  void anAskWithNothingOptionalSetGetsTheOneSetOfDefaults() throws Exception {
    estate(Map.of());
    RunInputs inputs = intake(ArtifactSourcePolicy.httpsOnly()).admit(plain(IntakeRequest.Recording.CLUSTER_OBJECTS));

    assertEquals(new NodeUpgradeTemplate(Distribution.K3S, TARGET, inputs.template().artifacts(),
        HostProfile.k3sDefaults(), new SshSettings("root", 22, "edge-1-ssh-key", "edge-1-known-hosts", null),
        DrainOptions.defaults(), 300, 0, "amd64"), inputs.template());
    assertEquals("https://releases.example/k3s", inputs.template().artifacts().get(0).source());
    assertNull(inputs.window());
    assertEquals(List.of(CP_0, CP_1), inputs.machines());
    assertEquals(inputs.template().forNode(CP_1.target(new ClusterRef("fleet", "edge-1"))), inputs.request(CP_1));
  }

  @Test
  void everyOverrideOfTheAskLandsInTheTemplateTheLayoutFromTheNamedHostProfile() throws Exception {
    estate(Map.of());
    client.resource(InplaceHostProfile.of("opt-bin", new HostLayoutSpec().setBinDir("/opt/bin")
        .setStagingDir("/var/lib/inplace/stage").setServerService("k3s-server"))).create();
    RunInputs inputs = intake(ArtifactSourcePolicy.httpsOnly()).admit(ask(
        new IntakeRequest.Host("standard", "opt-bin"),
        new IntakeRequest.Drain(600L, false, true, PdbBlockedAction.DELETE, null), 120L, 1000L,
        new IntakeRequest.Window(List.of("sat"), "22:00", "04:00", "Europe/Berlin"), List.of(CP_0), false,
        IntakeRequest.Recording.CLUSTER_OBJECTS));

    HostProfile k3s = HostProfile.k3sDefaults();
    assertEquals(new HostProfile("/opt/bin", k3s.imagesDir(), "/var/lib/inplace/stage", k3s.backupDir(), "k3s-server",
        k3s.agentService(), HostOs.STANDARD), inputs.template().profile());
    assertEquals(new DrainOptions(600, false, true, PdbBlockedAction.DELETE, false), inputs.template().drain());
    assertEquals(120, inputs.template().readyTimeoutSeconds());
    assertEquals(1000, inputs.template().minFreeBytes());
    assertEquals(new MaintenanceWindow(List.of("SAT"), "22:00", "04:00", "Europe/Berlin"), inputs.window());
  }

  @Test
  void aOneMachineClusterSkipsItsDrainWhateverTheAskSaid() throws Exception {
    estate(Map.of());
    RunInputs inputs = intake(ArtifactSourcePolicy.httpsOnly()).admit(ask(null,
        new IntakeRequest.Drain(60L, null, null, null, false), null, null, null, List.of(CP_0), true,
        IntakeRequest.Recording.CLUSTER_OBJECTS));
    assertEquals(new DrainOptions(60, true, false, PdbBlockedAction.FAIL, true), inputs.template().drain());
  }

  @Test
  void aClusterClassClusterIsRefusedOnlyForARunThatRecordsVersionsOnClusterObjects() throws Exception {
    estate(Map.of("topology", Map.of("class", "k3s-edge", "version", "v1.30.6+k3s1")));
    IntakeRefusal refused = assertThrows(IntakeRefusal.class,
        () -> intake(ArtifactSourcePolicy.httpsOnly()).admit(plain(IntakeRequest.Recording.CLUSTER_OBJECTS)));
    assertEquals(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, refused.type());

    RunInputs machineOnly = intake(ArtifactSourcePolicy.httpsOnly()).admit(plain(IntakeRequest.Recording.MACHINE_ONLY));
    assertEquals(TARGET, machineOnly.template().targetVersion());
  }

  @Test
  void whatWasAskedIsCheckedBeforeAnythingItNamesIsRead() throws Exception {
    int before = server.getRequestCount();
    IntakeRequest badHost = ask(new IntakeRequest.Host(null, "../etc"), null, null, null,
        null, List.of(CP_0), false, IntakeRequest.Recording.CLUSTER_OBJECTS);
    IntakeRefusal refused = assertThrows(IntakeRefusal.class, () -> intake(ArtifactSourcePolicy.httpsOnly()).admit(badHost));

    assertEquals(UpgradeFailures.INVALID_REQUEST, refused.type());
    assertEquals("spec.hostProfile.name must name an InplaceHostProfile (a lower-case DNS name), got '../etc'",
        refused.getMessage());
    assertEquals(before, server.getRequestCount(), "no Secret, ConfigMap or Cluster was read");

    MachineInfo noAddress = new MachineInfo("edge-1-md-0", "md-0", NodeRole.WORKER, "10.0.0.1;reboot", "", "", "md");
    IntakeRefusal machine = assertThrows(IntakeRefusal.class, () -> intake(ArtifactSourcePolicy.httpsOnly())
        .admit(ask(null, null, null, null, null, List.of(noAddress), false, IntakeRequest.Recording.MACHINE_ONLY)));
    assertEquals("Machine edge-1-md-0: host address has unexpected characters: 10.0.0.1;reboot", machine.getMessage());
  }

  @Test
  void theIntakesDefaultsAreTheCustomResourceSchemasDefaults() throws Exception {
    // The API server applies the schema's defaults; the intake applies its own for what was left unset
    // (a server that does not default, the hook's settings). They must be the same values.
    assertEquals(AskedValues.DEFAULT_ARCH, schemaDefault(UpgradeSpec.class, "arch"));
    assertEquals(String.valueOf(AskedValues.DEFAULT_READY_TIMEOUT_SECONDS),
        schemaDefault(UpgradeSpec.class, "readyTimeoutSeconds"));
    assertEquals(String.valueOf(AskedValues.DEFAULT_MIN_FREE_BYTES), schemaDefault(UpgradeSpec.class, "minFreeBytes"));
    assertEquals(IntakeRequest.Catalogue.DEFAULT_KEY, schemaDefault(CatalogueReference.class, "key"));
  }

  private static String schemaDefault(Class<?> type, String field) throws NoSuchFieldException {
    return type.getDeclaredField(field).getAnnotation(Default.class).value();
  }

  @Test
  void everyKeyIsDocumentedInConfigurationMd() throws Exception {
    String doc = java.nio.file.Files.readString(Path.of("..", "docs", "configuration.md"));
    for (String key : ArtifactSettings.KEYS) {
      assertTrue(doc.contains("`" + key + "`"), "docs/configuration.md does not document " + key);
    }
  }

  @Test
  void settingsComeFromTheEnvironment() {
    ArtifactSourcePolicy p = ArtifactSettings.fromEnvironment(Map.of(ArtifactSettings.ARTIFACT_HOSTS,
        "github.com, Releases.Example", ArtifactSettings.ARTIFACT_MAX_BYTES, "1000"));
    assertEquals(Set.of("github.com", "releases.example"), p.allowedHosts());
    assertEquals(1000, p.maxBytes());
    assertEquals(ArtifactSourcePolicy.DEFAULT_MAX_BYTES, ArtifactSettings.fromEnvironment(Map.of()).maxBytes());
    assertThrows(IllegalArgumentException.class,
        () -> ArtifactSettings.fromEnvironment(Map.of(ArtifactSettings.ARTIFACT_MIRROR_DIR, "relative/dir")));
    assertThrows(IllegalArgumentException.class,
        () -> ArtifactSettings.fromEnvironment(Map.of(ArtifactSettings.ARTIFACT_MAX_BYTES, "-1")));
  }
  @Test
  void aHostProfileWhoseBinDirIsAContainersRootFilesystemIsRefusedNamingTheAllowedDirectories() throws Exception {
    estate(Map.of());
    String rootfs = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/0a1b/rootfs/usr/bin";
    client.resource(InplaceHostProfile.of("evil", new HostLayoutSpec().setBinDir(rootfs))).create();
    IntakeRefusal refused = assertThrows(IntakeRefusal.class, () -> intake(ArtifactSourcePolicy.httpsOnly()).admit(ask(
        new IntakeRequest.Host(null, "evil"), null, null, null, null, List.of(CP_0), false,
        IntakeRequest.Recording.CLUSTER_OBJECTS)));

    assertEquals(UpgradeFailures.INVALID_REQUEST, refused.type());
    assertEquals("spec.hostProfile.name: InplaceHostProfile evil: binDir " + rootfs
        + " is not a k3s directory; allowed: /usr/local/bin, /opt/bin", refused.getMessage());
  }

  @Test
  void aHostProfileThatStagesInEtcIsRefused() throws Exception {
    estate(Map.of());
    client.resource(InplaceHostProfile.of("etc", new HostLayoutSpec().setStagingDir("/etc"))).create();
    IntakeRefusal refused = assertThrows(IntakeRefusal.class, () -> intake(ArtifactSourcePolicy.httpsOnly()).admit(ask(
        new IntakeRequest.Host(null, "etc"), null, null, null, null, List.of(CP_0), false,
        IntakeRequest.Recording.CLUSTER_OBJECTS)));

    assertEquals("spec.hostProfile.name: InplaceHostProfile etc: stagingDir /etc is not a directory under"
        + " /var/lib/inplace/ (one or more name segments, e.g. /var/lib/inplace/staging)", refused.getMessage());
  }

  @Test
  void aMissingHostProfileIsRefusedNamingWhoCreatesIt() throws Exception {
    estate(Map.of());
    IntakeRefusal refused = assertThrows(IntakeRefusal.class, () -> intake(ArtifactSourcePolicy.httpsOnly()).admit(ask(
        new IntakeRequest.Host(null, "nowhere"), null, null, null, null, List.of(CP_0), false,
        IntakeRequest.Recording.CLUSTER_OBJECTS)));

    assertEquals(UpgradeFailures.INVALID_REQUEST, refused.type());
    assertEquals("spec.hostProfile.name: InplaceHostProfile nowhere not found (an administrator creates it:"
        + " docs/crd-reference.md)", refused.getMessage());
  }
}
