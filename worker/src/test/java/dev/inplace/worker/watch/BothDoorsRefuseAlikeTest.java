package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.HostLayoutSpec;
import dev.inplace.worker.crd.HostProfileSpec;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.extension.HookDoor;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One wrong input, both doors: the same estate broken the same way is refused by the custom
 * resource watcher (a ControlPlaneUpgrade, Failed condition) and by UpdateMachine (a Failure naming
 * the type) with the same failure type, and the same message where the intake words it; a message
 * about a field differs only in how each door names the field ({@code spec.arch}, {@code setting
 * arch}). Neither door starts anything. The one deliberate difference, a ClusterClass cluster, is
 * asserted as such.
 */
@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class BothDoorsRefuseAlikeTest {
  private static final Pattern HOOK_REFUSAL = Pattern.compile("cannot upgrade node cp-0: (\\w+): (.*)");
  KubernetesClient client;
  private WatcherHarness h;
  private HookDoor hook;

  /**
   * One wrong input: how the estate is broken for both doors, what the CR's spec and the hook's
   * settings say, the type both must refuse with, and the part of the message both must carry (the
   * whole message when {@code sameMessage}).
   */
  record Case(
      String name,
      Consumer<TestEstate> estate,
      Consumer<ControlPlaneUpgradeSpec> spec,
      Map<String, String> settings,
      String type,
      String mentions,
      boolean sameMessage) {
    @Override
    public String toString() {
      return name;
    }
  }

  @BeforeEach
  void setUp() {
    h = new WatcherHarness(client);
    hook = new HookDoor(client, TestEstate.NAMESPACE);
  }

  @AfterEach
  void tearDown() {
    hook.close();
    h.close();
  }

  private static Case intakeWorded(String name, Consumer<TestEstate> estate, String type, String mentions) {
    return new Case(name, estate, s -> {}, Map.of(), type, mentions, true);
  }

  static Stream<Case> cases() {
    return Stream.of(
        intakeWorded("a missing Secret", e -> e.deleteSecret(TestEstate.KNOWN_HOSTS), UpgradeFailures.SECRET_NOT_FOUND,
            "Secret fleet/edge-known-hosts (the pinned host keys) not found"),
        intakeWorded("a missing kubeconfig data key", e -> e.secret("edge-kubeconfig", "config", "x"),
            UpgradeFailures.SECRET_NOT_FOUND, "has no data key value"),
        intakeWorded("a catalogue without its key", e -> e.catalogueJson("other.json", "{\"releases\":[]}"),
            UpgradeFailures.ARTIFACT_UNAVAILABLE, "has no key catalogue.json (it has [other.json])"),
        intakeWorded("a catalogue without the release", e -> e.catalogue("v1.31.3+k3s1"),
            UpgradeFailures.ARTIFACT_UNAVAILABLE, "no K3S amd64 release " + TestEstate.TO),
        intakeWorded("an unsafe artifact source", e -> e.catalogueJson(CatalogueReference.DEFAULT_KEY, TestEstate.releases(
                TestEstate.TO, "http://releases.example/k3s", "/usr/local/bin/k3s")),
            UpgradeFailures.INVALID_REQUEST, "source scheme http is not allowed"),
        intakeWorded("an install path outside the layout", e -> e.catalogueJson(CatalogueReference.DEFAULT_KEY,
                TestEstate.releases(TestEstate.TO, "https://releases.example/k3s", "/etc/cron.d/k3s")),
            UpgradeFailures.INVALID_REQUEST, "install path /etc/cron.d/k3s is outside the distribution's layout"),
        intakeWorded("a downgrade", e -> e.setKubelet("cp-0", "v1.32.1+k3s1"), UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
            "cp-0 runs v1.32.1+k3s1 (a downgrade)"),
        intakeWorded("a skipped minor", e -> e.setKubelet("cp-0", "v1.29.3+k3s1"),
            UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "cp-0 runs v1.29.3+k3s1 (2 minors behind)"),
        new Case("a bad host profile (OS)", e -> {}, s -> s.setHostProfile(new HostProfileSpec().setOs("windows")),
            Map.of(HookDoor.OS, "windows"), UpgradeFailures.INVALID_REQUEST,
            " must be standard or kairos, got 'windows'", false),
        new Case("a host profile whose binDir is outside the layout",
            e -> e.hostProfile("evil", new HostLayoutSpec().setBinDir("/run/evil")),
            s -> s.setHostProfile(new HostProfileSpec().setName("evil")), Map.of(HookDoor.HOST_PROFILE, "evil"),
            UpgradeFailures.INVALID_REQUEST,
            ": InplaceHostProfile evil: binDir /run/evil is not a k3s directory; allowed: /usr/local/bin, /opt/bin",
            false),
        new Case("a missing host profile", e -> {}, s -> s.setHostProfile(new HostProfileSpec().setName("nowhere")),
            Map.of(HookDoor.HOST_PROFILE, "nowhere"), UpgradeFailures.INVALID_REQUEST,
            ": InplaceHostProfile nowhere not found", false),
        new Case("a bad architecture", e -> {}, s -> s.setArch("x86/64"), Map.of(HookDoor.ARCH, "x86/64"),
            UpgradeFailures.INVALID_REQUEST, " must be a name like amd64 or arm64, got 'x86/64'", false),
        new Case("a bad SSH key Secret name", e -> {},
            s -> s.getSsh().setPrivateKeySecret("Edge_Key"), Map.of(HookDoor.SSH_KEY_SECRET, "Edge_Key"),
            UpgradeFailures.INVALID_REQUEST,
            ": ssh private key secret must be a lower-case DNS name (a-z, 0-9, '-', '.'), got 'Edge_Key'", false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theSameWrongInputIsRefusedWithTheSameTypeThroughBothDoors(Case c) throws Exception {
    c.estate().accept(h.estate);

    String[] byHook = hookRefusal(c.settings());
    String[] byResource = resourceRefusal(c.spec());

    assertEquals(c.type(), byResource[0], "custom resource: " + byResource[1]);
    assertEquals(c.type(), byHook[0], "hook: " + byHook[1]);
    assertTrue(byResource[1].contains(c.mentions()), "custom resource: " + byResource[1]);
    assertTrue(byHook[1].contains(c.mentions()), "hook: " + byHook[1]);
    if (c.sameMessage()) {
      assertEquals(byResource[1], byHook[1]);
    }
    assertEquals(List.of(), hook.started(), "the hook started nothing");
    assertNull(hook.runAnnotation(TestEstate.NAMESPACE, "edge-cp-0"), "the hook left the Machine as it was");
    assertEquals(List.of(), h.starts, "the watcher started nothing");
  }

  @Test
  void aClusterClassClusterIsRefusedOnlyWhereTheRunWouldRecordClusterVersions() throws Exception {
    h.estate.topology("k3s-edge");

    String[] resource = resourceRefusal(s -> {});
    ObjectNode answer = updateMachine(Map.of());

    assertEquals(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, resource[0], resource[1]);
    assertTrue(resource[1].contains("ClusterClass k3s-edge"), resource[1]);
    // UpdateMachine: CAPI's topology controller moved the version; the run records only the Machine.
    assertEquals("Success", answer.get("status").asText(), answer.toString());
    assertEquals(1, hook.started().size());
    assertTrue(hook.started().get(0).markMachine());
  }

  @Test
  void aValidInputIsAdmittedThroughBothDoorsWithTheSameTemplate() throws Exception {
    ObjectNode answer = updateMachine(Map.of());
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = h.create(TestEstate.controlPlaneUpgrade("good", TestEstate.spec(new ControlPlaneUpgradeSpec())));
    h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.RUNNING);

    assertEquals("Success", answer.get("status").asText(), answer.toString());
    assertNotNull(hook.runAnnotation(TestEstate.NAMESPACE, "edge-cp-0"), "the hook marks the Machine it starts a run for");
    NodeUpgradeRequest fromHook = hook.started().get(0);
    NodeUpgradeTemplate fromResource = h.request(h.starts.get(0), ControlPlaneUpgradeRequest.class).template();
    assertEquals(fromResource.artifacts(), fromHook.artifacts());
    assertEquals(fromResource.profile(), fromHook.profile());
    assertEquals(fromResource.ssh(), fromHook.ssh());
    assertEquals(fromResource.drain(), fromHook.drain());
    assertEquals(fromResource.readyTimeoutSeconds(), fromHook.readyTimeoutSeconds());
    assertEquals(fromResource.arch(), fromHook.arch());
  }

  /** The CR door: a ControlPlaneUpgrade of the estate's cluster; its Failed reason and message. */
  private String[] resourceRefusal(Consumer<ControlPlaneUpgradeSpec> change) {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgradeSpec spec = TestEstate.spec(new ControlPlaneUpgradeSpec());
    change.accept(spec);
    ControlPlaneUpgrade cr = h.create(TestEstate.controlPlaneUpgrade("both-doors", spec));
    UpgradeStatus status = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.FAILED);
    assertFalse(h.kube.resource(cr).get().getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER));
    return new String[] {WatcherHarness.reason(status, UpgradeCondition.FAILED), status.getMessage()};
  }

  /** The hook door: UpdateMachine for control-plane Machine edge-cp-0; the type and message of its Failure. */
  private String[] hookRefusal(Map<String, String> settings) throws Exception {
    ObjectNode answer = updateMachine(settings);
    assertEquals("Failure", answer.get("status").asText(), answer.toString());
    Matcher m = HOOK_REFUSAL.matcher(answer.get("message").asText());
    assertTrue(m.matches(), answer.toString());
    return new String[] {m.group(1), m.group(2)};
  }

  /** UpdateMachine for control-plane Machine edge-cp-0, with the setting that names the estate's catalogue. */
  private ObjectNode updateMachine(Map<String, String> settings) throws Exception {
    Map<String, String> values = new HashMap<>(settings);
    values.put(HookDoor.CATALOGUE_CONFIG_MAP, TestEstate.CATALOGUE);
    return hook.updateMachine(TestEstate.NAMESPACE, TestEstate.CLUSTER, "edge-cp-0", TestEstate.TO, values);
  }
}
