package dev.inplace.sandbox.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.reset;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.atLeast;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.verifyNoMoreInteractions;
import static org.mockito.Mockito.withSettings;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.capi.HostAuthority;
import dev.inplace.activities.host.HostActivitiesImpl;
import dev.inplace.activities.host.HostDistribution;
import dev.inplace.sandbox.hosts.SandboxHost;
import dev.inplace.sandbox.estate.HostRecords;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.sandbox.release.FileSha256;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.sandbox.hosts.TestKeys;
import dev.inplace.starter.CliDoor;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.FailurePolicySpec;
import dev.inplace.worker.crd.HostProfileSpec;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.SshSpec;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.RunIntake;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.impl.NodeUpgradeWorkflowImpl;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.interceptors.WorkflowClientCallsInterceptor;
import io.temporal.common.interceptors.WorkflowClientCallsInterceptorBase;
import io.temporal.common.interceptors.WorkflowClientInterceptorBase;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import io.fabric8.mockwebserver.http.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bad-input campaign: hostile or malformed inputs at every door (custom resources, the CLI, the
 * four hooks, catalogue JSON, kubeconfig Secrets, known_hosts Secrets, SSH keys, workflow inputs
 * started by hand, host profiles). Each must be refused with its specific message, and nothing may
 * change: no API write (beyond the refused resource's own status and Events), no workflow started by
 * a door, no activity run (so no file written on a host), no SSH connection made. The host door is
 * the exception that proves the scripts: a product step runs over SSH on a sandbox host after a link
 * or a pod's binary was planted on it, and the host's files must not change beyond what it names.
 */
@EnableKubernetesMockClient(crud = true)
class BadInputCampaignTest {
  static KubernetesMockServer server;
  static KubernetesClient client;
  @TempDir static Path dir;

  private static final String NS = "fleet";
  private static final String TARGET = "v1.31.2+k3s1";
  private static final String SHA = "ab".repeat(32);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger DOOR_STARTS = new AtomicInteger();
  private static final AtomicInteger SERIAL = new AtomicInteger();

  private static TestWorkflowEnvironment env;
  private static SandboxHosts hostEstate;
  private static FakeReleases hostReleases;
  private static HostActivitiesImpl hostSteps;
  private static CapiExtension extension;
  private static UpgradeWatcher watcher;
  private static DemoTls tls;
  private static final HostActivities HOSTS = mock(HostActivities.class, withSettings().withoutAnnotations());
  private static final NodeActivities NODES = mock(NodeActivities.class, withSettings().withoutAnnotations());
  /**
   * The CAPI activities of the runs started by hand: all mocked but the read-only host confirmation,
   * which asks the mock management cluster through the product's {@link HostAuthority}.
   */
  private static final ClusterApiActivities CAPI = mock(ClusterApiActivities.class, withSettings().withoutAnnotations()
      .defaultAnswer(call -> {
        if (call.getMethod().getName().equals("confirmHostAccess")) {
          ClusterApiActivities.HostAccessCheck check = call.getArgument(0);
          new HostAuthority(client).confirm(check.host(), check.distribution(), check.profile());
          return null;
        }
        return org.mockito.Answers.RETURNS_DEFAULTS.answer(call);
      }));
  /** Secrets the host steps' connector read: none before a refused step (so no SSH connection either). */
  private static final AtomicInteger SECRET_READS = new AtomicInteger();

  /** One hostile input: the door, a name, what to put in place first, the call, the expected refusal. */
  record Case(String door, String name, Runnable setup, Callable<String> refusal, String expected) {
    @Override
    public String toString() {
      return door + ": " + name;
    }
  }

  @BeforeAll
  static void start() {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS)
        .addToLabels("upgrade.inplace.dev/in-place", "true").endMetadata().build()).create();
    InplaceCrds.install(client);
    env = TestWorkflowEnvironment.newInstance(TestEnvironmentOptions.newBuilder()
        .setWorkflowClientOptions(WorkflowClientOptions.newBuilder().setInterceptors(new WorkflowClientInterceptorBase() {
          @Override
          public WorkflowClientCallsInterceptor workflowClientCallsInterceptor(WorkflowClientCallsInterceptor next) {
            return new WorkflowClientCallsInterceptorBase(next) {
              @Override
              public WorkflowStartOutput start(WorkflowStartInput input) {
                if (!input.getWorkflowId().startsWith("by-hand/")) {
                  DOOR_STARTS.incrementAndGet();
                }
                return super.start(input);
              }
            };
          }
        }).build())
        .build());
    for (String name : List.of("InplaceCluster", "InplaceKind", "InplaceTargetVersion", "InplacePhase")) {
      env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    env.registerSearchAttribute("InplaceNode", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST);
    Worker worker = env.newWorker("q");
    worker.registerWorkflowImplementationTypes(NodeUpgradeWorkflowImpl.class);
    worker.registerActivitiesImplementations(HOSTS, NODES, CAPI);
    env.start();
    ArtifactSourcePolicy policy = ArtifactSourcePolicy.mirror(dir.resolve("mirror"));
    tls = DemoTls.create(dir.resolve("tls"));
    extension = CapiExtension.start(ExtensionOptions.loopback(tls.serverCert, tls.serverKey, tls.caCert), client,
        env.getWorkflowClient(), "q", policy);
    watcher = UpgradeWatcher.start(client, env.getWorkflowClient(), "q",
        WatcherOptions.defaults().withStatusInterval(Duration.ofMillis(200)), policy);
    hostReleases = new FakeReleases(dir.resolve("host-artifacts"), FakeReleaseSizes.small());
    hostReleases.add(HOST_VERSION);
    hostEstate = SandboxHosts.open(dir.resolve("hosts"), new SandboxHosts.Settings("inplace", 0, 93));
    hostSteps = new HostActivitiesImpl(new SshConnector((namespace, name) -> {
          SECRET_READS.incrementAndGet();
          return Map.of(
            SshSettings.PRIVATE_KEY_DATA_KEY, hostEstate.clientPrivateKey().getBytes(StandardCharsets.UTF_8),
            SshSettings.KNOWN_HOSTS_DATA_KEY, hostEstate.knownHosts().getBytes(StandardCharsets.UTF_8));
        }, SshClientOptions.defaults()),
        new HostAuthority(client),
        new ArtifactCache(dir.resolve("host-cache"), ArtifactSourcePolicy.mirror(dir.resolve("host-artifacts"))),
        HostDistribution.k3s());
  }

  @AfterAll
  static void stop() {
    hostEstate.close();
    watcher.close();
    extension.close();
    env.close();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void isRefusedWithItsMessageAndChangesNothing(Case c) throws Exception {
    c.setup().run();
    drainRequests();
    DOOR_STARTS.set(0);
    reset(HOSTS, NODES, CAPI);

    String message = c.refusal().call();

    assertTrue(message != null && message.contains(c.expected()), c + ": expected '" + c.expected() + "' in: " + message);
    List<RecordedRequest> requests = drainRequests();
    List<String> writes = requests.stream()
        .filter(r -> !r.getMethod().equals("GET"))
        .map(r -> r.getMethod() + " " + r.getPath())
        .filter(w -> !(c.door().equals("custom resource") && (w.contains("upgrades") || w.contains("/events"))))
        .toList();
    assertEquals(List.of(), writes, c + ": API writes");
    if (c.door().equals("workflow started by hand")) {
      // A run started by hand reads no Secret before its host is confirmed (issue 34, H4).
      assertEquals(List.of(), requests.stream().map(RecordedRequest::getPath).filter(p -> p.contains("/secrets"))
          .toList(), c + ": Secrets read");
    }
    assertEquals(0, DOOR_STARTS.get(), c + ": workflows started");
    verifyNoInteractions(HOSTS, NODES);
    // The one CAPI call a run may make before it is refused: the read-only confirmation of its host.
    verify(CAPI, atLeast(0)).confirmHostAccess(any());
    verifyNoMoreInteractions(CAPI);
  }

  private static List<RecordedRequest> drainRequests() throws InterruptedException {
    List<RecordedRequest> all = new ArrayList<>();
    for (RecordedRequest r = server.takeRequest(50, TimeUnit.MILLISECONDS); r != null;
        r = server.takeRequest(50, TimeUnit.MILLISECONDS)) {
      all.add(r);
    }
    return all;
  }

  static Stream<Case> cases() {
    List<Case> cases = new ArrayList<>();
    catalogue(cases);
    kubeconfigs(cases);
    knownHosts(cases);
    sshKeys(cases);
    hooks(cases);
    customResources(cases);
    byHand(cases);
    byHandAccess(cases);
    cli(cases);
    hostFiles(cases);
    return cases.stream();
  }

  // ---- catalogue JSON (through the one intake) --------------------------------------------------

  private static String artifactJson(String kind, String source, String sha, long size, String path, String mode) {
    return """
        {"name":"k3s","kind":"%s","source":"%s","sha256":"%s","sizeBytes":%d,"installPath":"%s","mode":"%s"}"""
        .formatted(kind, source, sha, size, path, mode);
  }

  private static String release(String artifacts) {
    return "{\"releases\":[{\"version\":\"" + TARGET + "\",\"distribution\":\"K3S\",\"arch\":\"amd64\",\"artifacts\":["
        + artifacts + "]}]}";
  }

  private static void catalogueCase(List<Case> cases, String name, String json, String expected) {
    String map = "catalogue-" + SERIAL.incrementAndGet();
    cases.add(new Case("catalogue", name,
        () -> client.resource(CatalogueReference.configMap(NS, map, json)).create(),
        () -> refusal(() -> new RunIntake(client, ArtifactSourcePolicy.mirror(Path.of("/srv/mirror")))
            .release(NS, map, CatalogueReference.DEFAULT_KEY, TARGET, Distribution.K3S, "amd64")),
        expected));
  }

  private static void catalogue(List<Case> cases) {
    String ok = "/usr/local/bin/k3s";
    catalogueCase(cases, "not JSON", "{releases: [", "is not valid");
    catalogueCase(cases, "an unknown field", "{\"releases\":[],\"owner\":\"x\"}", "is not valid");
    catalogueCase(cases, "a digest that is not sha256",
        release(artifactJson("BINARY", "https://r.example/k3s", "abc", 1, ok, "0755")), "sha256 must be 64 hex");
    catalogueCase(cases, "a negative size",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, -1, ok, "0755")), "sizeBytes must be >= 0");
    catalogueCase(cases, "a relative install path",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 1, "usr/local/bin/k3s", "0755")), "must be an absolute path");
    catalogueCase(cases, "a path climbing out with ..",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 1, "/usr/local/bin/../../etc/shadow", "0755")), "without '..'");
    catalogueCase(cases, "a shell metacharacter in the path",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 1, "/usr/local/bin/k3s;reboot", "0755")), "must be an absolute path");
    catalogueCase(cases, "a setuid mode",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 1, ok, "4755")), "mode must be octal");
    catalogueCase(cases, "plain http",
        release(artifactJson("BINARY", "http://r.example/k3s", SHA, 1, ok, "0755")), "source scheme http is not allowed");
    catalogueCase(cases, "an ftp source",
        release(artifactJson("BINARY", "ftp://r.example/k3s", SHA, 1, ok, "0755")), "source scheme ftp is not allowed");
    catalogueCase(cases, "the worker's service-account token",
        release(artifactJson("BINARY", "file:/var/run/secrets/kubernetes.io/serviceaccount/token", SHA, 0, ok, "0755")),
        "must lie below the mirror directory /srv/mirror");
    catalogueCase(cases, "a mirror path climbing out",
        release(artifactJson("BINARY", "/srv/mirror/../../etc/passwd", SHA, 0, ok, "0755")), "must lie below the mirror directory");
    catalogueCase(cases, "user info in the URL",
        release(artifactJson("BINARY", "https://user:pw@r.example/k3s", SHA, 1, ok, "0755")), "carry no user info");
    catalogueCase(cases, "a size above the cap",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 5L << 30, ok, "0755")), "above the worker's limit");
    catalogueCase(cases, "root's authorized_keys",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 1, "/root/.ssh/authorized_keys", "0600")),
        "outside the distribution's layout");
    catalogueCase(cases, "sudo in the bin dir",
        release(artifactJson("BINARY", "https://r.example/k3s", SHA, 1, "/usr/local/bin/sudo", "0755")),
        "outside the distribution's layout");
    catalogueCase(cases, "a script as image archive",
        release(artifactJson("IMAGE_ARCHIVE", "https://r.example/i", SHA, 1, "/var/lib/rancher/k3s/agent/images/x.sh", "0644")),
        "image archive path");
    catalogueCase(cases, "no release for the version", "{\"releases\":[]}", "no K3S amd64 release " + TARGET);
  }

  private static String refusal(Callable<?> call) {
    try {
      call.call();
      return "(accepted)";
    } catch (IntakeRefusal e) {
      return e.type() + ": " + e.getMessage();
    } catch (ApplicationFailure e) {
      return e.getType() + ": " + e.getOriginalMessage();
    } catch (Exception e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  // ---- kubeconfig Secrets -----------------------------------------------------------------------

  private static void kubeconfigCase(List<Case> cases, String name, String user, String expected) {
    String cluster = "k" + SERIAL.incrementAndGet();
    String kubeconfig = """
        apiVersion: v1
        kind: Config
        clusters:
        - name: w
          cluster:
            server: https://127.0.0.1:1
        contexts:
        - name: w
          context: {cluster: w, user: u}
        current-context: w
        users:
        - name: u
          user:
            %s
        """.formatted(user);
    cases.add(new Case("kubeconfig Secret", name,
        () -> secret(cluster + "-kubeconfig", "value", kubeconfig),
        () -> refusal(() -> {
          try (KubeClients clients = new KubeClients(client)) {
            return clients.workload(new ClusterRef(NS, cluster));
          }
        }),
        expected));
  }

  private static void kubeconfigs(List<Case> cases) {
    kubeconfigCase(cases, "exec plugin", "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}",
        "users[u].user.exec is not allowed (it runs a command in the worker)");
    kubeconfigCase(cases, "auth-provider", "auth-provider: {name: gcp}", "users[u].user.auth-provider is not allowed");
    kubeconfigCase(cases, "tokenFile", "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
        "users[u].user.tokenFile is not allowed (it reads a file of the worker)");
    kubeconfigCase(cases, "client-certificate file", "client-certificate: /etc/inplace/tls.crt",
        "use client-certificate-data");
    kubeconfigCase(cases, "client-key file", "client-key: /etc/inplace/tls.key", "use client-key-data");
    kubeconfigCase(cases, "impersonation", "as: system:admin", "users[u].user.as is not allowed");
    String cluster = "k" + SERIAL.incrementAndGet();
    cases.add(new Case("kubeconfig Secret", "not YAML", () -> secret(cluster + "-kubeconfig", "value", "{{{: ["),
        () -> refusal(() -> {
          try (KubeClients clients = new KubeClients(client)) {
            return clients.workload(new ClusterRef(NS, cluster));
          }
        }), "it is not YAML"));
  }

  private static void secret(String name, String key, String value) {
    client.secrets().inNamespace(NS).resource(new SecretBuilder().withNewMetadata().withName(name).endMetadata()
        .addToData(key, Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))).build())
        .createOr(r -> r.update());
  }

  // ---- known_hosts Secrets and SSH keys (refused before any connection: the host is port 1) ---------

  private static TestKeys keys() {
    return TestKeys.generate(dir.resolve("ssh-key-" + SERIAL.incrementAndGet()));
  }

  /** {@code knownHosts} and {@code key} get a real key pair's private key and public line. */
  private static void sshCase(List<Case> cases, String door, String name, UnaryOperator<String> knownHosts,
      UnaryOperator<String> key, String expected) {
    cases.add(new Case(door, name, () -> { },
        () -> refusal(() -> {
          TestKeys real = keys();
          return new SshConnector((ns, secret) -> Map.of(
            SshSettings.KNOWN_HOSTS_DATA_KEY, knownHosts.apply("127.0.0.1 " + real.publicKeyLine).getBytes(StandardCharsets.UTF_8),
            SshSettings.PRIVATE_KEY_DATA_KEY, key.apply(real.privateKey).getBytes(StandardCharsets.UTF_8)),
            SshClientOptions.defaults())
            .open(new HostAccess(NS, "cp-1", "127.0.0.1",
                new SshSettings("root", 1, "edge-1-ssh-key", "edge-1-known-hosts", null)));
        }),
        expected));
  }

  private static void knownHosts(List<Case> cases) {
    String door = "known_hosts Secret";
    UnaryOperator<String> same = k -> k;
    sshCase(cases, door, "empty", k -> "", same, "SecretNotFound: Secret fleet/edge-1-known-hosts has no data key");
    sshCase(cases, door, "only comments", k -> "# nothing pinned\n", same, "HostKeyMismatch: cannot read known_hosts"
        + " from Secret fleet/edge-1-known-hosts: it pins no readable host key");
    sshCase(cases, door, "a key that is not base64", k -> "127.0.0.1 ssh-ed25519 ***notbase64***\n", same,
        "it pins no readable host key");
    sshCase(cases, door, "a good pin plus an unreadable line", k -> k + "\n10.0.0.2 ssh-ed25519\n", same,
        "1 of its 2 entries cannot be read");
  }

  private static void sshKeys(List<Case> cases) {
    String door = "SSH key";
    UnaryOperator<String> same = k -> k;
    String unreadable = "is not a readable unencrypted SSH private key";
    sshCase(cases, door, "not a key", same, k -> "hello", unreadable);
    sshCase(cases, door, "a truncated key", same, k -> k.substring(0, k.length() / 2), unreadable);
    sshCase(cases, door, "an empty key", same, k -> "", "SecretNotFound: Secret fleet/edge-1-ssh-key has no data key");
  }

  // ---- the four hooks, over mutual TLS ----------------------------------------------------------

  private static String post(String path, String body, boolean clientCertificate, String method) {
    try {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .sslContext(clientCertificate ? tls.clientContext() : trustOnly())
          .connectTimeout(Duration.ofSeconds(5)).build();
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://localhost:" + extension.port()
          + "/hooks.runtime.cluster.x-k8s.io/v1alpha1/" + path)).timeout(Duration.ofSeconds(20));
      request = method.equals("GET") ? request.GET() : request.POST(HttpRequest.BodyPublishers.ofString(body));
      HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        return response.statusCode() + " " + response.body();
      }
      JsonNode answer = JSON.readTree(response.body());
      return answer.path("status").asText() + ": " + answer.path("message").asText();
    } catch (Exception e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  /** Trusts the server's CA, presents no certificate. */
  private static javax.net.ssl.SSLContext trustOnly() throws Exception {
    java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (var in = java.nio.file.Files.newInputStream(tls.caCert)) {
      trust.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    javax.net.ssl.TrustManagerFactory tmf =
        javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  private static String updateMachine(String namespace, String name, String version) {
    return """
        {"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"UpdateMachineRequest",
         "desired":{"machine":{"metadata":{"name":"%s","namespace":"%s"},"spec":{"clusterName":"edge-1","version":"%s"}},
                    "bootstrapConfig":{"kind":"KThreesConfig","spec":{}}}}""".formatted(name, namespace, version);
  }

  /** A request of {@code hook} with CAPI's envelope (apiVersion, kind) around {@code fields}. */
  private static String hookRequest(String hook, String fields) {
    return "{\"apiVersion\":\"hooks.runtime.cluster.x-k8s.io/v1alpha1\",\"kind\":\"" + hook + "Request\","
        + fields + "}";
  }

  private static void hookCase(List<Case> cases, String name, String path, String body, String expected) {
    cases.add(new Case("hook", name, () -> { }, () -> post(path, body, true, "POST"), expected));
  }

  private static void hooks(List<Case> cases) {
    String update = "updatemachine/update-machine";
    hookCase(cases, "UpdateMachine for a namespace not opted in", update, updateMachine("kube-system", "m", TARGET),
        "Failure: namespace kube-system is not opted in to in-place updates");
    hookCase(cases, "UpdateMachine without desired.machine", update, hookRequest("UpdateMachine", "\"desired\":{}"),
        "desired.machine is required");
    hookCase(cases, "UpdateMachine without CAPI's kind and apiVersion", update,
        updateMachine(NS, "m", TARGET).replace("\"apiVersion\":\"hooks.runtime.cluster.x-k8s.io/v1alpha1\",\"kind\":\"UpdateMachineRequest\",", ""),
        "Failure: expected kind UpdateMachineRequest, got none");
    hookCase(cases, "UpdateMachine with a command as version", update, updateMachine(NS, "m", "v1.31.2;reboot"),
        "is not a Kubernetes version");
    hookCase(cases, "UpdateMachine for an unknown Machine", update, updateMachine(NS, "ghost", TARGET),
        "Machine fleet/ghost not found");
    hookCase(cases, "UpdateMachine with duplicate keys", update,
        "{\"desired\":{\"machine\":{}},\"desired\":{\"machine\":{}}}", "Failure: ");
    hookCase(cases, "UpdateMachine nested 500 deep", update, "[".repeat(500) + "]".repeat(500), "Failure: ");
    hookCase(cases, "UpdateMachine not JSON", update, "desired=machine", "Failure: ");
    hookCase(cases, "CanUpdateMachine without machines", "canupdatemachine/can-update-machine",
        hookRequest("CanUpdateMachine", "\"current\":{}"), "Failure: current.machine is required");
    hookCase(cases, "CanUpdateMachineSet without machine sets", "canupdatemachineset/can-update-machineset",
        hookRequest("CanUpdateMachineSet", "\"current\":{}"), "Failure: current.machineSet is required");
    hookCase(cases, "an unknown hook", "beforeclusterdelete/evil", "{}", "404 ");
    hookCase(cases, "UpdateMachine without a namespace", update,
        hookRequest("UpdateMachine", "\"desired\":{\"machine\":{\"metadata\":{\"name\":\"m\"},\"spec\":{\"version\":\"" + TARGET + "\"}}}"),
        "desired.machine.metadata.namespace is required");
    hookCase(cases, "UpdateMachine with a mistyped setting", update,
        updateMachine(NS, "m", TARGET).replaceFirst("\\{", "{\"settings\":{\"readyTimeout\":\"900\"},"),
        "Failure: setting 'readyTimeout' is not known");
    cases.add(new Case("hook", "the wrong method", () -> { }, () -> post(update, "", true, "GET"), "405 "));
    cases.add(new Case("hook", "a caller without a client certificate", () -> { },
        () -> post(update, updateMachine(NS, "m", TARGET), false, "POST"), "IOException"));
  }

  // ---- custom resources -------------------------------------------------------------------------

  private static <S extends UpgradeSpec<S>> S valid(S spec) {
    return spec.setClusterName("edge-1").setVersion(TARGET)
        .setReleaseCatalogue(new CatalogueReference().setConfigMapName("releases"))
        .setSsh(new SshSpec().setPrivateKeySecret("edge-1-ssh-key").setKnownHostsSecret("edge-1-known-hosts"));
  }

  private static void crCase(List<Case> cases, String name, Consumer<ControlPlaneUpgradeSpec> cp,
      Consumer<WorkersUpgradeSpec> workers, String expected) {
    String crName = "bad-" + SERIAL.incrementAndGet();
    CustomResource<?, UpgradeStatus>[] created = new CustomResource[1];
    Runnable setup;
    if (cp != null) {
      ControlPlaneUpgradeSpec spec = valid(new ControlPlaneUpgradeSpec());
      cp.accept(spec);
      setup = () -> created[0] = client.resource(ControlPlaneUpgrade.of(NS, crName, spec)).create();
    } else {
      WorkersUpgradeSpec spec = valid(new WorkersUpgradeSpec());
      workers.accept(spec);
      setup = () -> created[0] = client.resource(WorkersUpgrade.of(NS, crName, spec)).create();
    }
    cases.add(new Case("custom resource", name, setup, () -> awaitFailed(created[0]), expected));
  }

  private static String awaitFailed(CustomResource<?, UpgradeStatus> cr) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      CustomResource<?, UpgradeStatus> now = client.resource(cr).get();
      if (now != null && now.getStatus() != null && now.getStatus().getPhase() == UpgradePhase.FAILED) {
        Thread.sleep(300); // let the watcher finish its status and Event writes, which are allowed
        return now.getStatus().getMessage();
      }
      Thread.sleep(100);
    }
    return "(not refused within 30 s)";
  }

  private static void customResources(List<Case> cases) {
    crCase(cases, "a cluster name with an underscore", s -> s.setClusterName("Edge_1"), null, "spec.clusterName must name");
    crCase(cases, "a version that is a command", s -> s.setVersion("v1.31.2;reboot"), null, "spec.version must be");
    crCase(cases, "no catalogue", s -> s.setReleaseCatalogue(null), null, "spec.releaseCatalogue.configMapName is required");
    crCase(cases, "no SSH settings", s -> s.setSsh(null), null, "spec.ssh is required");
    crCase(cases, "a jump host port out of range", s -> s.getSsh().setJumpHost("bastion:99999"), null,
        "spec.ssh: jump host must be host[:port] with a port from 1 to 65535, got 'bastion:99999'");
    crCase(cases, "a negative soak", s -> s.setSoakSeconds(-5L), null, "spec.soakSeconds must be >= 0");
    crCase(cases, "a zero ready timeout", s -> s.setReadyTimeoutSeconds(0L), null, "spec.readyTimeoutSeconds must be >= 1");
    crCase(cases, "a negative free-space floor", s -> s.setMinFreeBytes(-1L), null, "spec.minFreeBytes must be >= 0");
    crCase(cases, "maxUnavailable 0", null, s -> s.setMaxUnavailable(new IntOrString("0")), "spec.maxUnavailable must be");
    crCase(cases, "maxUnavailable 150%", null, s -> s.setMaxUnavailable(new IntOrString("150%")), "spec.maxUnavailable must be");
    crCase(cases, "a MachineDeployment listed twice", null, s -> s.setMachineDeployments(List.of("md-a", "md-a")),
        "spec.machineDeployments must be distinct");
    crCase(cases, "negative maxFailures", null, s -> s.setFailurePolicy(new FailurePolicySpec().setMaxFailures(-1)),
        "spec.failurePolicy.maxFailures must be >= 0");
    crCase(cases, "maxFailures with Halt", null, s -> s.setFailurePolicy(new FailurePolicySpec().setMaxFailures(3)),
        "spec.failurePolicy.maxFailures applies only to type Continue, got 3 with Halt");
    // Issue 34, H1 and H2: host paths are not free text in a resource, and an admin's profile is checked too.
    crCase(cases, "binDir written in the resource, pointing into a container's root filesystem",
        s -> s.setHostProfile(new HostProfileSpec().setBinDir(CONTAINER_ROOTFS)), null,
        "spec.hostProfile.binDir (" + CONTAINER_ROOTFS + ") is no longer accepted: host paths are not set in an"
            + " upgrade resource; an administrator creates an InplaceHostProfile with them and the resource names it"
            + " in spec.hostProfile.name");
    crCase(cases, "stagingDir=/etc written in the resource", null,
        s -> s.setHostProfile(new HostProfileSpec().setStagingDir("/etc")),
        "spec.hostProfile.stagingDir (/etc) is no longer accepted");
  }

  /** A binary a pod wrote into its own root filesystem, as the host sees it. */
  static final String CONTAINER_ROOTFS = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/0a1b2c/rootfs/usr/bin";

  // ---- workflow inputs started by hand (as with `temporal workflow start`) ----------------------

  private static void byHandCase(List<Case> cases, String name, UnaryOperator<Artifact> hostile, String expected) {
    byHandCase(cases, name, hostile, HostProfile.k3sDefaults(), expected);
  }

  private static void byHandCase(List<Case> cases, String name, UnaryOperator<Artifact> hostile, HostProfile profile,
      String expected) {
    String id = "by-hand/" + SERIAL.incrementAndGet();
    cases.add(new Case("workflow started by hand", name, () -> { }, () -> {
      Artifact base = new Artifact("k3s", ArtifactKind.BINARY, "https://r.example/k3s", SHA, 1, "/usr/local/bin/k3s", "0755");
      NodeUpgradeRequest request = new NodeUpgradeRequest(
          new NodeTarget(new ClusterRef(NS, "edge-1"), "edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.1"),
          Distribution.K3S, TARGET, List.of(hostile.apply(base)), profile,
          new SshSettings("root", 22, "edge-1-ssh-key", "edge-1-known-hosts", null),
          new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false), 60, 0, "amd64");
      NodeUpgradeWorkflow run = env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
          WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue("q").build());
      try {
        run.upgrade(request);
        return "(accepted)";
      } catch (WorkflowFailedException e) {
        return e.getCause() instanceof ApplicationFailure f ? f.getType() + ": " + f.getOriginalMessage() : e.toString();
      }
    }, expected));
  }

  /**
   * A run started by hand whose release is fine but whose host, Secrets or layout are made up: the
   * management cluster knows Cluster fleet/edge-1 and its Machine edge-1-cp-1 (Node cp-1 at 10.0.0.1),
   * with the conventional Secrets; the run's first step refuses what it does not confirm.
   */
  private static void byHandAccessCase(List<Case> cases, String name, NodeTarget node, SshSettings ssh,
      HostProfile profile, String expected) {
    String id = "by-hand/" + SERIAL.incrementAndGet();
    cases.add(new Case("workflow started by hand", name,
        () -> HostRecords.record(client, NS, "edge-1", "edge-1-cp-1", "cp-1", "10.0.0.1", "root", 22), () -> {
      Artifact k3s = new Artifact("k3s", ArtifactKind.BINARY, "https://r.example/k3s", SHA, 1, "/usr/local/bin/k3s", "0755");
      NodeUpgradeRequest request = new NodeUpgradeRequest(node, Distribution.K3S, TARGET, List.of(k3s), profile, ssh,
          new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false), 60, 0, "amd64").withMarkMachine(true);
      NodeUpgradeWorkflow run = env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
          WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue("q").build());
      try {
        run.upgrade(request);
        return "(accepted)";
      } catch (WorkflowFailedException e) {
        return e.getCause() instanceof ApplicationFailure f ? f.getType() + ": " + f.getOriginalMessage() : e.toString();
      }
    }, expected));
  }

  private static void byHandAccess(List<Case> cases) {
    ClusterRef edge1 = new ClusterRef(NS, "edge-1");
    SshSettings conventional = new SshSettings("root", 22, "edge-1-ssh-key", "edge-1-known-hosts", null);
    HostProfile k3s = HostProfile.k3sDefaults();
    byHandAccessCase(cases, "a made-up host address for a real Machine",
        new NodeTarget(edge1, "edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.66.0.1"), conventional, k3s,
        "HostAccessMismatch: refusing the run's host: address 10.66.0.1 is not one of Machine fleet/edge-1-cp-1's"
            + " addresses [10.0.0.1]: a run's input does not choose the host; nothing was changed");
    byHandAccessCase(cases, "a made-up Machine",
        new NodeTarget(edge1, "edge-1-cp-9", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.1"), conventional, k3s,
        "MachineNotFound: refusing the run's host: Machine fleet/edge-1-cp-9 not found: a step acts only on a Machine"
            + " of the management cluster");
    byHandAccessCase(cases, "Secrets in another namespace (the cluster named in kube-system)",
        new NodeTarget(new ClusterRef("kube-system", "edge-1"), "edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE,
            "10.0.0.1"), conventional, k3s,
        "MachineNotFound: refusing the run's host: Machine kube-system/edge-1-cp-1 not found: a step acts only on a"
            + " Machine of the management cluster, and reads Secrets only in its Cluster's namespace");
    byHandAccessCase(cases, "a real Machine under another cluster's name",
        new NodeTarget(new ClusterRef(NS, "edge-2"), "edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.1"),
        new SshSettings("root", 22, "edge-2-ssh-key", "edge-2-known-hosts", null), k3s,
        "HostAccessMismatch: refusing the run's host: Machine fleet/edge-1-cp-1 belongs to cluster edge-1, not edge-2");
    byHandAccessCase(cases, "another Node than the Machine's",
        new NodeTarget(edge1, "edge-1-cp-1", "cp-2", NodeRole.CONTROL_PLANE, "10.0.0.1"), conventional, k3s,
        "HostAccessMismatch: refusing the run's host: Machine fleet/edge-1-cp-1's Node is cp-1, not cp-2");
    NodeTarget real = new NodeTarget(edge1, "edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.1");
    byHandAccessCase(cases, "a made-up SSH key Secret", real,
        new SshSettings("root", 22, "ci-deploy-key", "edge-1-known-hosts", null), k3s,
        "HostAccessMismatch: refusing the run's host: SSH settings (key Secret ci-deploy-key, known_hosts Secret"
            + " edge-1-known-hosts, user root, port 22) are not ones cluster fleet/edge-1's resources configure");
    byHandAccessCase(cases, "a made-up jump host", real,
        new SshSettings("root", 22, "edge-1-ssh-key", "edge-1-known-hosts", "collector.example:22"), k3s,
        "HostAccessMismatch: refusing the run's host: SSH settings (key Secret edge-1-ssh-key, known_hosts Secret"
            + " edge-1-known-hosts, jump host collector.example:22, user root, port 22) are not ones");
    byHandAccessCase(cases, "a host layout no resource names (binDir /opt/bin, on the allowlist)", real, conventional,
        new HostProfile("/opt/bin", k3s.imagesDir(), k3s.stagingDir(), k3s.backupDir(), k3s.serverService(),
            k3s.agentService()),
        "HostAccessMismatch: refusing the run's host: host layout (binDir /opt/bin, imagesDir"
            + " /var/lib/rancher/k3s/agent/images, stagingDir /var/lib/inplace/staging, backupDir"
            + " /var/lib/inplace/backup, services k3s/k3s-agent, os standard) is not one cluster fleet/edge-1's"
            + " resources name");
  }

  private static Artifact with(Artifact a, String source, ArtifactKind kind, String path) {
    return new Artifact(a.name(), kind, source, a.sha256(), a.sizeBytes(), path, a.mode());
  }

  private static void byHand(List<Case> cases) {
    byHandCase(cases, "an install path in /etc", a -> with(a, a.source(), a.kind(), "/etc/shadow"),
        "InvalidRequest: refusing the release");
    byHandCase(cases, "root's SSH keys", a -> with(a, a.source(), a.kind(), "/root/.ssh/authorized_keys"),
        "outside the distribution's layout");
    byHandCase(cases, "a binary named sudo", a -> with(a, a.source(), a.kind(), "/usr/local/bin/sudo"),
        "outside the distribution's layout");
    byHandCase(cases, "a script as image archive",
        a -> with(a, a.source(), ArtifactKind.IMAGE_ARCHIVE, "/var/lib/rancher/k3s/agent/images/run.sh"), "image archive path");
    byHandCase(cases, "plain http", a -> with(a, "http://r.example/k3s", a.kind(), a.installPath()),
        "source scheme http is not allowed");
    byHandCase(cases, "a gopher source", a -> with(a, "gopher://r.example/k3s", a.kind(), a.installPath()),
        "source scheme gopher is not allowed");
    HostProfile k3s = HostProfile.k3sDefaults();
    byHandCase(cases, "a binDir in a container's root filesystem", a -> a, new HostProfile(CONTAINER_ROOTFS,
        k3s.imagesDir(), k3s.stagingDir(), k3s.backupDir(), k3s.serverService(), k3s.agentService()),
        "InvalidRequest: refusing the host profile of cp-1: binDir " + CONTAINER_ROOTFS + " is not a k3s directory");
    byHandCase(cases, "stagingDir=/etc", a -> a, new HostProfile(k3s.binDir(), k3s.imagesDir(), "/etc",
        k3s.backupDir(), k3s.serverService(), k3s.agentService()),
        "InvalidRequest: refusing the host profile of cp-1: stagingDir /etc is not a directory under");
  }

  // ---- a host's own files: what a pod or a resource writer could plant (issue 34, H1 and H2) ----

  private static final String HOST_VERSION = "v1.30.4+k3s1";
  /** The Cluster the host door's sandbox hosts belong to in the mock management cluster. */
  private static final String HOST_CLUSTER = "hosts";
  private static final String K3S_PATH = "/usr/local/bin/k3s";

  /**
   * A product step on a fresh sandbox host (over SSH, as root through sudo) after {@code plant} put
   * something on the host's root. Its ground truth, every file, link and directory under the root but
   * the scripts' journal, must not change beyond {@code mayChange} (paths relative to the root).
   */
  private static void hostCase(List<Case> cases, String name, Consumer<Path> plant,
      java.util.function.Function<HostAccess, Object> step, String expected, Set<String> mayChange) {
    SandboxHost[] host = new SandboxHost[1];
    HostAccess[] access = new HostAccess[1];
    cases.add(new Case("host", name, () -> {
      host[0] = hostEstate.provision("h-" + SERIAL.incrementAndGet(), NodeRole.WORKER, HOST_VERSION, hostReleases);
      access[0] = HostRecords.record(client, NS, HOST_CLUSTER, HOST_CLUSTER + "-" + host[0].name(), host[0].name(),
          host[0].address(), hostEstate.user(), hostEstate.port());
      plant.accept(host[0].root());
    }, () -> {
      Map<String, String> before = groundTruth(host[0].root());
      Object[] result = new Object[1];
      String message = refusal(() -> result[0] = step.apply(access[0]));
      if (result[0] != null) {
        message = result[0].toString(); // a step that went through: its result
      }
      Map<String, String> after = groundTruth(host[0].root());
      Set<String> changed = new java.util.TreeSet<>();
      for (String path : java.util.stream.Stream.concat(before.keySet().stream(), after.keySet().stream()).toList()) {
        if (!java.util.Objects.equals(before.get(path), after.get(path)) && !mayChange.contains(path)) {
          changed.add(path + ": " + before.get(path) + " -> " + after.get(path));
        }
      }
      assertEquals(Set.of(), changed, name + ": the host changed (" + message + ")");
      return message;
    }, expected));
  }

  /** Relative path -> what it is: a directory, a link and its target, or a file and its sha256. */
  private static Map<String, String> groundTruth(Path root) throws java.io.IOException {
    Map<String, String> truth = new java.util.TreeMap<>();
    try (Stream<Path> all = java.nio.file.Files.walk(root)) {
      for (Path p : all.toList()) {
        String rel = root.relativize(p).toString();
        if (rel.equals("var/log") || rel.startsWith("var/log/")) {
          continue; // the journal: every script writes its begin and end
        }
        if (java.nio.file.Files.isSymbolicLink(p)) {
          truth.put(rel, "link to " + java.nio.file.Files.readSymbolicLink(p));
        } else if (java.nio.file.Files.isDirectory(p)) {
          truth.put(rel, "directory " + java.nio.file.Files.getOwner(p));
        } else {
          truth.put(rel, "file " + FileSha256.of(p));
        }
      }
    }
    return truth;
  }

  private static void write(Path file, String text) {
    try {
      java.nio.file.Files.createDirectories(file.getParent());
      java.nio.file.Files.writeString(file, text);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void link(Path link, Path target) {
    try {
      java.nio.file.Files.createDirectories(link.getParent());
      if (java.nio.file.Files.isDirectory(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        try (Stream<Path> tree = java.nio.file.Files.walk(link)) {
          for (Path p : tree.sorted(java.util.Comparator.reverseOrder()).toList()) {
            java.nio.file.Files.delete(p);
          }
        }
      }
      java.nio.file.Files.createSymbolicLink(link, target);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String sha256(Path file) {
    try {
      return FileSha256.of(file);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void hostFiles(List<Case> cases) {
    HostProfile k3s = HostProfile.k3sDefaults();
    hostCase(cases, "a step asked for a real sandbox host that is not its Machine's: refused before any Secret or SSH",
        root -> { },
        host -> {
          int secretsBefore = SECRET_READS.get();
          long sessionsBefore = hostEstate.sshSessions().orElseThrow();
          String other = host.address().equals("127.0.0.93") ? "127.0.0.94" : "127.0.0.93";
          try {
            return hostSteps.inspectHost(new HostActivities.HostInspectRequest(new HostAccess(host.secretNamespace(),
                host.nodeName(), other, host.ssh(), host.clusterName(), host.machineName()), Distribution.K3S,
                NodeRole.WORKER, k3s, List.of()));
          } finally {
            assertEquals(secretsBefore, SECRET_READS.get(), "Secrets read");
            assertEquals(sessionsBefore, hostEstate.sshSessions().orElseThrow(), "SSH sessions on the sandbox hosts");
          }
        },
        "HostAccessMismatch: address 127.0.0.9", Set.of());
    hostCase(cases, "binDir linked to a binary a pod wrote into its root filesystem: refused, nothing run",
        root -> {
          Path rootfs = root.resolve(CONTAINER_ROOTFS.substring(1));
          write(rootfs.resolve("k3s"), "#!/bin/bash\ntouch \"$INPLACE_HOST_ROOT/ran-as-root\"\necho v1.99.0\n");
          rootfs.resolve("k3s").toFile().setExecutable(true, false);
          link(root.resolve("usr/local/bin"), rootfs);
        },
        host -> hostSteps.inspectHost(new HostActivities.HostInspectRequest(host, Distribution.K3S, NodeRole.WORKER,
            k3s, List.of())),
        "refusing /usr/local/bin: /usr/local/bin is a symbolic link", Set.of());
    hostCase(cases, "stagingDir's parent linked to /etc (the chown's target): refused before anything is staged",
        root -> link(root.resolve("var/lib/inplace"), root.resolve("etc")),
        host -> hostSteps.inspectHost(new HostActivities.HostInspectRequest(host, Distribution.K3S, NodeRole.WORKER,
            k3s, List.of())),
        "refusing /var/lib/inplace/staging: /var/lib/inplace is a symbolic link", Set.of());
    hostCase(cases, "a link planted at <backupDir>/k3s.prev.tmp: the backup is made beside it, nothing written through it",
        root -> {
          write(root.resolve("etc/shadow"), "root:secret\n");
          link(root.resolve("var/lib/inplace/backup/k3s.prev.tmp"), root.resolve("etc/shadow"));
        },
        host -> hostSteps.backupBinaries(new HostActivities.BackupRequest(host, k3s, List.of(
            new HostActivities.InstalledFile(K3S_PATH, sha256(hostEstate.host(host.nodeName()).root()
                .resolve(K3S_PATH.substring(1))))))),
        "backedUp=[" + K3S_PATH + "]", Set.of("var/lib/inplace/backup/k3s.prev"));
    hostCase(cases, "the backup replaced by a link to a file with the old digest: not restored from",
        root -> {
          Path binary = root.resolve(K3S_PATH.substring(1));
          try {
            java.nio.file.Files.copy(binary, java.nio.file.Files.createDirectories(root.resolve("etc"))
                .resolve("old-k3s-elsewhere"));
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
          write(binary, "a k3s the run installed\n");
          link(root.resolve("var/lib/inplace/backup/k3s.prev"), root.resolve("etc/old-k3s-elsewhere"));
        },
        host -> hostSteps.restoreBinaries(new HostActivities.RestoreRequest(host, k3s, List.of(
            new HostActivities.InstalledFile(K3S_PATH, sha256(hostEstate.host(host.nodeName()).root()
                .resolve("etc/old-k3s-elsewhere")))), List.of())),
        "cannot restore " + K3S_PATH + ": no backup with sha256", Set.of());
  }

  // ---- the CLI (argument parsing only) ----------------------------------------------------------

  private static void cliCase(List<Case> cases, String name, List<String> args, Map<String, String> cliEnv, String expected) {
    cases.add(new Case("CLI", name, () -> { }, () -> {
      CliDoor.Outcome o = CliDoor.run(args, cliEnv);
      return o.exitCode() + " " + o.err();
    }, expected));
  }

  private static void cli(List<Case> cases) {
    Map<String, String> nowhere = Map.of("TEMPORAL_ADDRESS", "127.0.0.1:1");
    cliCase(cases, "no Temporal address", List.of("status", "node-upgrade/x"), Map.of(), "2 inplace status: set TEMPORAL_ADDRESS");
    cliCase(cases, "an unknown command", List.of("rm", "-rf"), nowhere, "2 inplace: Unmatched arguments from index 0: 'rm'");
    cliCase(cases, "status without a workflow ID", List.of("status"), nowhere, "2 inplace status: Missing required parameter: 'ID'");
  }
}
