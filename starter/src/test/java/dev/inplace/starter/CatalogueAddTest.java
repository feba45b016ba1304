package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.ReleaseCatalogue;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code catalogue add} on real files: a mirror directory, and the same files served by a real
 * https server on 127.0.0.1; the ConfigMap is written to a fabric8 mock API server in CRUD mode and
 * read back through the worker's own parser. Digests are computed here independently.
 */
class CatalogueAddTest {
  private static final String K3S = "v1.31.2+k3s1";

  private final KubernetesMockServer server =
      new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
  private KubernetesClient management;
  private LocalHttpsMirror https;
  private ByteArrayOutputStream out;
  private ByteArrayOutputStream err;
  @TempDir Path mirror;

  @BeforeEach
  void start() throws Exception {
    server.init();
    management = server.createClient();
    https = new LocalHttpsMirror(mirror);
  }

  @AfterEach
  void stop() {
    https.close();
    management.close();
    server.destroy();
  }

  private int run(String... args) {
    out = new ByteArrayOutputStream();
    err = new ByteArrayOutputStream();
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    CliContext context = CliContext.of(null, "q", o, 0).withKubernetes(path -> management).withHttp(https.client);
    return InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private Path file(String name, int size) throws Exception {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (name.hashCode() * 31 + i);
    }
    Path p = mirror.resolve(name);
    Files.write(p, bytes);
    return p;
  }

  private static String sha256(Path p) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
  }

  private ConfigMap configMap(String ns, String name) {
    return management.configMaps().inNamespace(ns).withName(name).get();
  }

  private ReleaseCatalogue stored(String ns, String name) {
    return ReleaseCatalogue.parse(configMap(ns, name).getData().get("catalogue.json"), "test");
  }

  @Test
  void aK3sReleaseFromAMirrorDirectoryIsMeasuredAndWrittenAsANewConfigMapTheWorkersParserReads() throws Exception {
    Path binary = file("k3s", 70_001);
    Path images = file("k3s-airgap-images-amd64.tar.zst", 12_345);

    int code = run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString(),
        "--configmap", "fleet/k3s-releases");

    assertEquals(0, code, err());
    assertTrue(out().startsWith("configmap fleet/k3s-releases: created K3S amd64 " + K3S), out());
    ReleaseCatalogue.Release release = stored("fleet", "k3s-releases").find(K3S, Distribution.K3S, "amd64");
    assertEquals(List.of(
        new Artifact("k3s", ArtifactKind.BINARY, binary.toString(), sha256(binary), 70_001, "/usr/local/bin/k3s", "0755"),
        new Artifact("k3s-airgap-images", ArtifactKind.IMAGE_ARCHIVE, images.toString(), sha256(images), 12_345,
            "/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst", "0644")), release.artifacts());
  }

  @Test
  void aReleaseIsMergedIntoAnExistingCatalogueKeepingItsOtherReleasesAndKeys() throws Exception {
    for (String name : List.of("kubeadm", "kubelet", "kubectl")) {
      file(name, 4096 + name.length());
    }
    file("kubernetes-images-amd64.tar", 2048);
    file("k3s", 100);
    file("k3s-airgap-images-amd64.tar", 50);
    assertEquals(0, run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString()), err());
    ConfigMap withOtherKey = new ConfigMapBuilder(configMap("default", "inplace-releases")).addToData("notes", "keep me").build();
    management.configMaps().resource(withOtherKey).update();

    int code = run("catalogue", "add", "--distribution", "kubeadm", "--version", "v1.31.2", "--from", mirror.toString(),
        "--mirror-path", "/srv/mirror/kubeadm/v1.31.2");

    assertEquals(0, code, err());
    assertTrue(out().startsWith("configmap default/inplace-releases: added KUBEADM amd64 v1.31.2"), out());
    ReleaseCatalogue catalogue = stored("default", "inplace-releases");
    assertEquals(2, catalogue.releases().size());
    catalogue.find(K3S, Distribution.K3S, "amd64");
    ReleaseCatalogue.Release kubeadm = catalogue.find("v1.31.2", Distribution.KUBEADM, "amd64");
    assertEquals(List.of("kubeadm", "kubelet", "kubectl", "kubernetes-images"),
        kubeadm.artifacts().stream().map(Artifact::name).toList());
    assertEquals("/srv/mirror/kubeadm/v1.31.2/kubelet", kubeadm.artifacts().get(1).source());
    assertEquals(sha256(mirror.resolve("kubelet")), kubeadm.artifacts().get(1).sha256());
    assertEquals("/var/lib/inplace/images/kubernetes-images-amd64.tar", kubeadm.artifacts().get(3).installPath());
    assertEquals("keep me", configMap("default", "inplace-releases").getData().get("notes"));
  }

  @Test
  void addingTheSameReleaseAgainChangesNothingAndADifferentOneNeedsReplace() throws Exception {
    file("k3s", 100);
    file("k3s-airgap-images-amd64.tar", 50);
    String[] add = {"catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString()};
    assertEquals(0, run(add), err());
    String version = configMap("default", "inplace-releases").getMetadata().getResourceVersion();

    assertEquals(0, run(add), err());
    assertTrue(out().startsWith("configmap default/inplace-releases: unchanged"), out());
    assertEquals(version, configMap("default", "inplace-releases").getMetadata().getResourceVersion());

    Path binary = file("k3s", 101);
    assertEquals(1, run(add));
    assertTrue(err().contains("already has a different K3S amd64 " + K3S + " release"), err());
    assertTrue(err().contains("--replace"), err());
    assertEquals(version, configMap("default", "inplace-releases").getMetadata().getResourceVersion());

    List<String> replace = new ArrayList<>(List.of(add));
    replace.add("--replace");
    assertEquals(0, run(replace.toArray(String[]::new)), err());
    assertTrue(out().startsWith("configmap default/inplace-releases: replaced"), out());
    assertEquals(sha256(binary), stored("default", "inplace-releases").find(K3S, Distribution.K3S, "amd64")
        .artifacts().get(0).sha256());
  }

  @Test
  void dryRunPrintsTheConfigMapAsYamlAndWritesNothing() throws Exception {
    Path binary = file("k0s-v1.31.2+k0s.0-amd64", 300);
    file("k0s-airgap-bundle-v1.31.2+k0s.0-amd64", 200);

    int code = run("catalogue", "add", "--distribution", "k0s", "--version", "v1.31.2+k0s.0", "--from", mirror.toString(),
        "--configmap", "fleet/k0s-releases", "--dry-run");

    assertEquals(0, code, err());
    assertNull(configMap("fleet", "k0s-releases"));
    JsonNode yaml = new ObjectMapper(new YAMLFactory()).readTree(out());
    assertEquals("ConfigMap", yaml.path("kind").asText());
    assertEquals("k0s-releases", yaml.path("metadata").path("name").asText());
    ReleaseCatalogue.Release release = ReleaseCatalogue.parse(yaml.path("data").path("catalogue.json").asText(), "dry run")
        .find("v1.31.2+k0s.0", Distribution.K0S, "amd64");
    assertEquals("/usr/local/bin/k0s", release.artifacts().get(0).installPath());
    assertEquals(sha256(binary), release.artifacts().get(0).sha256());
    assertEquals("/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2+k0s.0-amd64", release.artifacts().get(1).installPath());
  }

  @Test
  void aKairosReleaseIsTheOneOsImageArchiveInstalledAsTheActiveImage() throws Exception {
    Path image = file("kairos-os-image.tar", 4000);

    int code = run("catalogue", "add", "--distribution", "k3s", "--os", "kairos", "--version", K3S, "--from", mirror.toString());

    assertEquals(0, code, err());
    ReleaseCatalogue.Release release = stored("default", "inplace-releases").find(K3S, Distribution.K3S, "amd64", HostOs.KAIROS);
    assertEquals(List.of(new Artifact("os-image", ArtifactKind.OS_IMAGE, image.toString(), sha256(image), 4000,
        "/run/initramfs/cos-state/cOS/active.img", "0644")), release.artifacts());
  }

  @Test
  void badInputGetsASpecificErrorAndWritesNothing() throws Exception {
    file("k3s", 100);
    Map<List<String>, String> cases = Map.of(
        List.of("--distribution", "rke2", "--version", K3S, "--from", mirror.toString()),
        "'rke2' is not one of k3s, kubeadm, k0s",
        List.of("--distribution", "k3s", "--version", "1.31", "--from", mirror.toString()),
        "'1.31' is not a Kubernetes version",
        List.of("--distribution", "k3s", "--version", "v1.31.2", "--from", mirror.toString()),
        "'v1.31.2' is not a K3S release version; expected vX.Y.Z+k3sN",
        List.of("--distribution", "k0s", "--version", K3S, "--from", mirror.toString()),
        "expected vX.Y.Z+k0s.N",
        List.of("--distribution", "k3s", "--version", K3S, "--from", mirror.resolve("nowhere").toString()),
        "is neither an https URL nor a directory",
        List.of("--distribution", "k3s", "--version", K3S, "--from", "http://127.0.0.1/releases/"),
        "the worker fetches artifacts over https only",
        List.of("--distribution", "k3s", "--version", K3S, "--from", "https://127.0.0.1/releases/?token=x"),
        "carry no user info, query string or fragment",
        List.of("--distribution", "k3s", "--version", K3S, "--from", mirror.toString(), "--arch", "AMD64"),
        "--arch must be a Go architecture name",
        List.of("--distribution", "k3s", "--version", K3S, "--from", mirror.toString(), "--mirror-path", "srv/x"),
        "--mirror-path must be an absolute path");
    for (Map.Entry<List<String>, String> c : cases.entrySet()) {
      List<String> args = new ArrayList<>(List.of("catalogue", "add"));
      args.addAll(c.getKey());
      assertEquals(2, run(args.toArray(String[]::new)), c.getKey() + ": " + err());
      assertTrue(err().contains(c.getValue()), c.getKey() + ": " + err());
    }
    assertEquals(0, management.configMaps().inAnyNamespace().list().getItems().size());
  }

  @Test
  void aFileMissingFromTheMirrorIsNamedAndNothingIsWritten() throws Exception {
    file("k3s", 100);

    assertEquals(1, run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString()));

    assertTrue(err().contains("has no k3s-airgap-images for k3s " + K3S + " amd64: expected one of "
        + "k3s-airgap-images-amd64.tar.zst, k3s-airgap-images-amd64.tar.gz, k3s-airgap-images-amd64.tar"
        + " (or pass --binaries-only)"), err());
    assertEquals(0, management.configMaps().inAnyNamespace().list().getItems().size());
    assertEquals(0, run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString(),
        "--binaries-only"), err());
    assertEquals(List.of("k3s"), stored("default", "inplace-releases").releases().get(0).artifacts().stream()
        .map(Artifact::name).toList());
  }

  @Test
  void anInvalidCatalogueAlreadyInTheConfigMapIsRefusedAndLeftAsItIs() throws Exception {
    file("k3s", 100);
    management.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withNamespace("default")
        .withName("inplace-releases").endMetadata().addToData("catalogue.json", "{\"releases\": [{\"version\": \"x\"}]}")
        .build()).create();

    assertEquals(1, run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString(),
        "--binaries-only"));

    assertTrue(err().contains("release catalogue ConfigMap default/inplace-releases key catalogue.json is not valid"), err());
    assertTrue(err().contains("fix or remove that key first"), err());
    assertEquals("{\"releases\": [{\"version\": \"x\"}]}", configMap("default", "inplace-releases").getData().get("catalogue.json"));
  }

  @Test
  void aReleaseOverHttpsIsMeasuredFromTheServedBytesAndItsSourceIsTheUrl() throws Exception {
    Path binary = file("k0s-v1.31.2+k0s.0-amd64", 5000);
    Path bundle = file("k0s-airgap-bundle-v1.31.2+k0s.0-amd64", 3000);
    // The location redirects once within the allowed host, as GitHub's release downloads do.
    https.redirect("/download/k0s-v1.31.2+k0s.0-amd64", https.url("127.0.0.1", "/releases/k0s-v1.31.2+k0s.0-amd64"));
    https.redirect("/download/k0s-airgap-bundle-v1.31.2+k0s.0-amd64",
        https.url("127.0.0.1", "/releases/k0s-airgap-bundle-v1.31.2+k0s.0-amd64"));

    int code = run("catalogue", "add", "--distribution", "k0s", "--version", "v1.31.2+k0s.0",
        "--from", https.url("127.0.0.1", "/download/"), "--artifact-hosts", "127.0.0.1");

    assertEquals(0, code, err());
    ReleaseCatalogue.Release release = stored("default", "inplace-releases").find("v1.31.2+k0s.0", Distribution.K0S, "amd64");
    assertEquals(List.of(
        new Artifact("k0s", ArtifactKind.BINARY, https.url("127.0.0.1", "/download/k0s-v1.31.2%2Bk0s.0-amd64"),
            sha256(binary), 5000, "/usr/local/bin/k0s", "0755"),
        new Artifact("k0s-airgap-bundle", ArtifactKind.IMAGE_ARCHIVE,
            https.url("127.0.0.1", "/download/k0s-airgap-bundle-v1.31.2%2Bk0s.0-amd64"), sha256(bundle), 3000,
            "/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2+k0s.0-amd64", "0644")), release.artifacts());
  }

  @Test
  void aUrlHostOutsideTheAllowedHostsIsRefusedBeforeAnyRequest() throws Exception {
    file("k3s", 100);

    assertEquals(1, run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--binaries-only",
        "--from", https.url("127.0.0.1", "/releases/")));

    assertTrue(err().contains("host 127.0.0.1 is not in the allowed artifact hosts [cdn.dl.k8s.io, dl.k8s.io, github.com,"),
        err());
    assertTrue(err().contains("--artifact-hosts"), err());
    assertEquals(List.of(), https.requested);
    assertEquals(0, management.configMaps().inAnyNamespace().list().getItems().size());
  }

  @Test
  void aRedirectToAHostOutsideTheAllowedHostsIsRefusedBeforeItIsFollowed() throws Exception {
    file("k3s", 100);
    https.redirect("/download/k3s", https.url("localhost", "/releases/k3s"));

    assertEquals(1, run("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--binaries-only",
        "--from", https.url("127.0.0.1", "/download"), "--artifact-hosts", "127.0.0.1"));

    assertTrue(err().contains("redirects to host localhost, outside the allowed artifact hosts [127.0.0.1]"), err());
    assertEquals(List.of("/download/k3s"), https.requested);
    assertEquals(0, management.configMaps().inAnyNamespace().list().getItems().size());
  }

  @Test
  void aManagementClusterThatDoesNotAnswerIsExitThree() throws Exception {
    file("k3s", 100);
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    io.fabric8.kubernetes.client.Config config = new io.fabric8.kubernetes.client.ConfigBuilder()
        .withMasterUrl("http://127.0.0.1:" + closedPort).withRequestRetryBackoffLimit(0).build();
    try (KubernetesClient unreachable = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config).build()) {
      out = new ByteArrayOutputStream();
      err = new ByteArrayOutputStream();
      CliContext context = CliContext.of(null, "q", new PrintStream(out, true, StandardCharsets.UTF_8), 0)
          .withKubernetes(path -> unreachable);
      int code = InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8))
          .execute("catalogue", "add", "--distribution", "k3s", "--version", K3S, "--from", mirror.toString(), "--binaries-only");
      assertEquals(3, code, err());
    }
  }
}
