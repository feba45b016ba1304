package dev.inplace.sandbox.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.WorkerEnvironment;
import dev.inplace.worker.WorkerConfig;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.watch.WatcherOptions;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Renders every overlay of deploy/ with kubectl and checks it against the code: every env var is a
 * key the worker reads (WorkerEnvironment.KEYS), Services select the pods and reach named ports,
 * probes point at the worker's HTTP endpoints, and the pod is locked down as docs/install.md says.
 */
class DeployManifestsTest {
  static final List<String> OVERLAYS = Kustomize.OVERLAYS;

  /**
   * The worker's HTTP server (metrics and health): env INPLACE_HTTP_PORT, default 8080, container
   * port named http; liveness /healthz, readiness /readyz (issue 9's agreed names).
   */
  static final String HTTP_PORT_NAME = "http";
  static final String HTTP_PORT_KEY = "INPLACE_HTTP_PORT";
  static final int HTTP_DEFAULT_PORT = 8080;
  static final String LIVENESS_PATH = "/healthz";
  static final String READINESS_PATH = "/readyz";

  static final String NAMESPACE = "inplace-system";
  static final String WORKER = "inplace-worker";

  private static Container worker(Deployment d) {
    List<Container> containers = d.getSpec().getTemplate().getSpec().getContainers();
    assertEquals(1, containers.size(), "one container");
    return containers.get(0);
  }

  private static Deployment deployment(List<HasMetadata> objects) {
    Deployment d = Kustomize.one(objects, Deployment.class, WORKER);
    assertEquals(NAMESPACE, d.getMetadata().getNamespace());
    return d;
  }

  @ParameterizedTest
  @FieldSource("OVERLAYS")
  void everyEnvVarOfTheWorkerIsAKeyTheWorkerReads(String overlay) {
    List<HasMetadata> objects = Kustomize.render(overlay);
    Container c = worker(deployment(objects));
    for (EnvVar env : c.getEnv()) {
      assertTrue(WorkerEnvironment.KEYS.contains(env.getName()),
          overlay + ": env " + env.getName() + " is not a key the worker reads " + WorkerEnvironment.KEYS);
    }
    for (EnvFromSource from : c.getEnvFrom()) {
      assertTrue(from.getSecretRef() == null, overlay + ": no envFrom a Secret (its keys could be anything)");
      ConfigMap cm = Kustomize.one(objects, ConfigMap.class, from.getConfigMapRef().getName());
      assertEquals(NAMESPACE, cm.getMetadata().getNamespace());
      for (String key : cm.getData().keySet()) {
        assertTrue(WorkerEnvironment.KEYS.contains(key),
            overlay + ": ConfigMap " + cm.getMetadata().getName() + " key " + key + " is not a key the worker reads");
      }
      assertTrue(cm.getData().containsKey(dev.inplace.client.TemporalSettings.ADDRESS), "the Temporal address is configured");
    }
    // The Temporal API key comes from the user's Secret, optional (mTLS needs none).
    EnvVar apiKey = c.getEnv().stream().filter(e -> e.getName().equals(dev.inplace.client.TemporalSettings.API_KEY)).findFirst().orElseThrow();
    assertEquals("inplace-temporal", apiKey.getValueFrom().getSecretKeyRef().getName());
    assertTrue(apiKey.getValueFrom().getSecretKeyRef().getOptional());
    // Leader election needs the pod's own name and namespace.
    assertEquals("metadata.name", env(c, WatcherOptions.POD_NAME).getValueFrom().getFieldRef().getFieldPath());
    assertEquals("metadata.namespace", env(c, WatcherOptions.POD_NAMESPACE).getValueFrom().getFieldRef().getFieldPath());
  }

  @ParameterizedTest
  @FieldSource("OVERLAYS")
  void servicesSelectTheWorkerPodsAndReachTheirNamedPorts(String overlay) {
    List<HasMetadata> objects = Kustomize.render(overlay);
    Deployment d = deployment(objects);
    Map<String, String> podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
    assertTrue(podLabels.entrySet().containsAll(d.getSpec().getSelector().getMatchLabels().entrySet()),
        "the Deployment's selector matches its pods");
    List<Service> services = Kustomize.all(objects, Service.class);
    assertFalse(services.isEmpty());
    for (Service s : services) {
      assertTrue(podLabels.entrySet().containsAll(s.getSpec().getSelector().entrySet()),
          overlay + ": Service " + s.getMetadata().getName() + " selects " + s.getSpec().getSelector() + ", pods have " + podLabels);
      for (ServicePort port : s.getSpec().getPorts()) {
        ContainerPort target = containerPort(worker(d), port.getTargetPort().getStrVal())
            .orElseThrow(() -> new AssertionError(overlay + ": Service " + s.getMetadata().getName()
                + " targets port '" + port.getTargetPort() + "', which the worker container does not name"));
        assertEquals(port.getProtocol(), target.getProtocol());
      }
    }
    Service metrics = Kustomize.one(objects, Service.class, "inplace-worker-metrics");
    assertEquals(HTTP_PORT_NAME, metrics.getSpec().getPorts().get(0).getTargetPort().getStrVal());
  }

  @ParameterizedTest
  @FieldSource("OVERLAYS")
  void probesPointAtTheWorkersHealthEndpointsOnItsHttpPort(String overlay) {
    Container c = worker(deployment(Kustomize.render(overlay)));
    int served = Optional.ofNullable(c.getEnv().stream().filter(e -> e.getName().equals(HTTP_PORT_KEY)).findFirst().orElse(null))
        .map(e -> Integer.parseInt(e.getValue())).orElse(HTTP_DEFAULT_PORT);
    ContainerPort http = containerPort(c, HTTP_PORT_NAME).orElseThrow(() -> new AssertionError("no port named http"));
    assertEquals(served, http.getContainerPort(), "the port named http is the one the worker serves");
    assertProbe(c.getLivenessProbe(), LIVENESS_PATH);
    assertProbe(c.getStartupProbe(), LIVENESS_PATH);
    assertProbe(c.getReadinessProbe(), READINESS_PATH);
  }

  private static void assertProbe(Probe probe, String path) {
    assertNotNull(probe);
    assertEquals(path, probe.getHttpGet().getPath());
    assertEquals(HTTP_PORT_NAME, probe.getHttpGet().getPort().getStrVal());
  }

  @ParameterizedTest
  @FieldSource("OVERLAYS")
  void thePodRunsLockedDownWithAShortLivedTokenAndWritesOnlyTmpAndTheCache(String overlay) {
    List<HasMetadata> objects = Kustomize.render(overlay);
    Deployment d = deployment(objects);
    assertEquals(2, d.getSpec().getReplicas());
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    Container c = worker(d);
    assertTrue(pod.getSecurityContext().getRunAsNonRoot());
    assertTrue(pod.getSecurityContext().getRunAsUser() > 0);
    assertEquals("RuntimeDefault", pod.getSecurityContext().getSeccompProfile().getType());
    assertTrue(c.getSecurityContext().getReadOnlyRootFilesystem());
    assertFalse(c.getSecurityContext().getAllowPrivilegeEscalation());
    assertEquals(List.of("ALL"), c.getSecurityContext().getCapabilities().getDrop());
    for (String kind : List.of("cpu", "memory")) {
      assertNotNull(c.getResources().getRequests().get(kind), "request " + kind);
      assertNotNull(c.getResources().getLimits().get(kind), "limit " + kind);
    }
    // The Namespace enforces the restricted Pod Security Standard the pod meets.
    assertEquals("restricted",
        Kustomize.one(objects, Namespace.class, NAMESPACE).getMetadata().getLabels().get("pod-security.kubernetes.io/enforce"));

    // No legacy token: a projected, expiring one at the path clients look in.
    assertFalse(pod.getAutomountServiceAccountToken());
    Volume token = volumeAt(pod, c, "/var/run/secrets/kubernetes.io/serviceaccount");
    var projected = token.getProjected().getSources().stream()
        .filter(s -> s.getServiceAccountToken() != null).findFirst().orElseThrow().getServiceAccountToken();
    assertEquals("token", projected.getPath());
    assertTrue(projected.getExpirationSeconds() <= 3600, "a short-lived token");
    assertEquals(WORKER, pod.getServiceAccountName());
    Kustomize.one(objects, ServiceAccount.class, WORKER);

    // Writable: /tmp and the artifact cache, both emptyDirs; every other mount is read-only.
    String cache = env(c, WorkerConfig.ARTIFACT_CACHE).getValue();
    Set<String> writable = Set.of("/tmp", cache);
    for (VolumeMount m : c.getVolumeMounts()) {
      Volume v = volumeAt(pod, c, m.getMountPath());
      if (writable.contains(m.getMountPath())) {
        assertNotNull(v.getEmptyDir(), m.getMountPath() + " is an emptyDir");
        assertNotNull(v.getEmptyDir().getSizeLimit(), m.getMountPath() + " has a size limit");
      } else {
        assertTrue(Boolean.TRUE.equals(m.getReadOnly()), overlay + ": " + m.getMountPath() + " must be read-only");
      }
    }
    assertEquals(writable, Set.copyOf(c.getVolumeMounts().stream().filter(m -> !Boolean.TRUE.equals(m.getReadOnly()))
        .map(VolumeMount::getMountPath).toList()));

    // The Temporal Secret is the user's: mounted optional, so an API-key-only setup starts.
    Volume temporal = pod.getVolumes().stream().filter(v -> v.getSecret() != null
        && "inplace-temporal".equals(v.getSecret().getSecretName())).findFirst().orElseThrow();
    assertTrue(temporal.getSecret().getOptional());
  }

  @ParameterizedTest
  @FieldSource("OVERLAYS")
  void rbacBindsExistingRolesToTheWorkersServiceAccountAndNeverListsSecrets(String overlay) {
    List<HasMetadata> objects = Kustomize.render(overlay);
    for (ClusterRoleBinding b : Kustomize.all(objects, ClusterRoleBinding.class)) {
      Kustomize.one(objects, ClusterRole.class, b.getRoleRef().getName());
      assertWorkerSubject(b.getSubjects());
    }
    for (RoleBinding b : Kustomize.all(objects, RoleBinding.class)) {
      assertEquals("Role", b.getRoleRef().getKind(), "a RoleBinding binds a Role of its own namespace");
      assertTrue(Kustomize.all(objects, Role.class).stream().anyMatch(r -> r.getMetadata().getName().equals(
              b.getRoleRef().getName()) && r.getMetadata().getNamespace().equals(b.getMetadata().getNamespace())),
          overlay + ": RoleBinding " + b.getMetadata().getNamespace() + "/" + b.getMetadata().getName() + " binds a missing Role");
      assertWorkerSubject(b.getSubjects());
    }
    Stream<PolicyRule> rules = Stream.concat(
        Kustomize.all(objects, ClusterRole.class).stream().flatMap(r -> r.getRules().stream()),
        Kustomize.all(objects, Role.class).stream().flatMap(r -> r.getRules().stream()));
    rules.forEach(rule -> {
      boolean coreOrAny = rule.getApiGroups().contains("") || rule.getApiGroups().contains("*");
      boolean secrets = rule.getResources().contains("secrets") || rule.getResources().contains("*");
      if (coreOrAny && secrets) {
        assertFalse(rule.getVerbs().stream().anyMatch(v -> Set.of("list", "watch", "*").contains(v)),
            overlay + ": no list or watch on Secrets: " + rule);
      }
      assertFalse(rule.getVerbs().contains("*"), overlay + ": no wildcard verbs: " + rule);
    });
    assertEquals(List.of("controlplaneupgrades.upgrade.inplace.dev", "inplacehostprofiles.upgrade.inplace.dev",
            "workersupgrades.upgrade.inplace.dev"),
        Kustomize.all(objects, CustomResourceDefinition.class).stream().map(c -> c.getMetadata().getName()).sorted()
            .toList(), "the three CRDs are installed");
  }

  private static void assertWorkerSubject(List<Subject> subjects) {
    assertEquals(1, subjects.size());
    assertEquals("ServiceAccount", subjects.get(0).getKind());
    assertEquals(WORKER, subjects.get(0).getName());
    assertEquals(NAMESPACE, subjects.get(0).getNamespace());
  }

  @org.junit.jupiter.api.Test
  void theExtensionOverlayServesTheHooksWithCertManagersCertificate() {
    List<HasMetadata> objects = Kustomize.render("extension");
    Deployment d = deployment(objects);
    Container c = worker(d);
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    assertEquals("true", env(c, ExtensionOptions.EXTENSION).getValue());
    int port = Integer.parseInt(env(c, ExtensionOptions.PORT).getValue());

    GenericKubernetesResource certificate = generic(objects, "Certificate", "inplace-extension");
    String secretName = (String) spec(certificate).get("secretName");
    for (String key : List.of(ExtensionOptions.TLS_CERT, ExtensionOptions.TLS_KEY)) {
      Path file = Path.of(env(c, key).getValue());
      Volume v = volumeAt(pod, c, file.getParent().toString());
      assertEquals(secretName, v.getSecret().getSecretName(), key + " is a file of the Certificate's Secret");
      assertTrue(Set.of("tls.crt", "tls.key").contains(file.getFileName().toString()));
    }

    Service service = Kustomize.one(objects, Service.class, "inplace-extension");
    ServicePort https = service.getSpec().getPorts().get(0);
    assertEquals(port, containerPort(c, https.getTargetPort().getStrVal()).orElseThrow().getContainerPort(),
        "the Service reaches INPLACE_EXTENSION_PORT");

    GenericKubernetesResource config = generic(objects, "ExtensionConfig", "inplace");
    @SuppressWarnings("unchecked")
    Map<String, Object> target = (Map<String, Object>) ((Map<String, Object>) spec(config).get("clientConfig")).get("service");
    assertEquals(service.getMetadata().getName(), target.get("name"));
    assertEquals(service.getMetadata().getNamespace(), target.get("namespace"));
    assertEquals(https.getPort(), ((Number) target.get("port")).intValue());
    assertEquals(NAMESPACE + "/" + secretName,
        config.getMetadata().getAnnotations().get("runtime.cluster.x-k8s.io/inject-ca-from-secret"));
    @SuppressWarnings("unchecked")
    List<String> dnsNames = (List<String>) spec(certificate).get("dnsNames");
    assertTrue(dnsNames.contains(service.getMetadata().getName() + "." + NAMESPACE + ".svc"), "the certificate names the Service");
  }

  @org.junit.jupiter.api.Test
  @SuppressWarnings("unchecked")
  void theExtensionOverlayRequiresTheCapiManagersClientCertificatesAndAdmitsOnlyTheirNamespaces() {
    List<HasMetadata> objects = Kustomize.render("extension");
    Deployment d = deployment(objects);
    Container c = worker(d);
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    // Mutual TLS: the client CAs come from the ConfigMap of the CAPI namespaces' CA certificates,
    // not from the serving Certificate's Secret (whose CA signs in inplace-system).
    Path ca = Path.of(env(c, ExtensionOptions.CLIENT_CA).getValue());
    assertEquals("ca.crt", ca.getFileName().toString());
    Volume clientCa = volumeAt(pod, c, ca.getParent().toString());
    assertNotNull(clientCa.getConfigMap(), "the client CAs are certificates only, in a ConfigMap");
    assertEquals("inplace-extension-client-ca", clientCa.getConfigMap().getName());
    assertTrue(c.getEnv().stream().noneMatch(e -> e.getName().equals(ExtensionOptions.ALLOW_UNAUTHENTICATED)));
    List<String> clientNamespaces = Kustomize.all(objects, GenericKubernetesResource.class).stream()
        .filter(r -> "Certificate".equals(r.getKind()) && "inplace-extension-client".equals(r.getMetadata().getName()))
        .peek(r -> assertTrue(((List<String>) spec(r).get("usages")).contains("client auth")))
        .peek(r -> assertFalse(r.getMetadata().getNamespace().equals(NAMESPACE), "not signed where the serving CA signs"))
        .peek(r -> assertEquals("inplace-extension-client-ca", issuerRef(r).get("name"),
            "a client certificate comes from its own namespace's client CA"))
        .map(r -> r.getMetadata().getNamespace()).sorted().toList();
    assertEquals(List.of("capi-kubeadm-control-plane-system", "capi-system"), clientNamespaces);
    io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy policy = Kustomize.one(objects,
        io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy.class, "inplace-extension");
    assertEquals(d.getSpec().getSelector().getMatchLabels(), policy.getSpec().getPodSelector().getMatchLabels());
    var https = policy.getSpec().getIngress().stream()
        .filter(r -> r.getPorts().stream().anyMatch(p -> "https".equals(p.getPort().getStrVal()))).toList();
    assertEquals(1, https.size(), "one rule admits the hook port");
    assertEquals(clientNamespaces, https.get(0).getFrom().get(0).getNamespaceSelector().getMatchExpressions().get(0)
        .getValues().stream().sorted().toList(), "only the namespaces holding a client certificate");
    assertTrue(policy.getSpec().getIngress().stream().filter(r -> r.getFrom() == null || r.getFrom().isEmpty())
        .allMatch(r -> r.getPorts().stream().noneMatch(p -> "https".equals(p.getPort().getStrVal()))),
        "the hook port is never open to everyone");
  }

  /**
   * Issue 34, H5: no ClusterIssuer (it would sign a client certificate for whoever may create a
   * Certificate anywhere); every Certificate names a namespaced Issuer that exists in its own
   * namespace, and every CA Issuer's key Secret is a CA Certificate of that namespace.
   */
  @org.junit.jupiter.api.Test
  void theExtensionsCertificatesComeFromIssuersOfTheirOwnNamespace() {
    List<GenericKubernetesResource> certManager = Kustomize.all(Kustomize.render("extension"), GenericKubernetesResource.class)
        .stream().filter(r -> r.getApiVersion().startsWith("cert-manager.io/")).toList();
    assertTrue(certManager.stream().noneMatch(r -> r.getKind().equals("ClusterIssuer")), "no ClusterIssuer");
    List<GenericKubernetesResource> certificates = certManager.stream().filter(r -> r.getKind().equals("Certificate")).toList();
    assertEquals(6, certificates.size(), "a serving certificate, two client certificates and their three CAs: "
        + certificates.stream().map(r -> r.getMetadata().getNamespace() + "/" + r.getMetadata().getName()).toList());
    for (GenericKubernetesResource certificate : certificates) {
      String ns = certificate.getMetadata().getNamespace();
      Map<String, Object> ref = issuerRef(certificate);
      assertEquals("Issuer", ref.get("kind"), ns + "/" + certificate.getMetadata().getName());
      GenericKubernetesResource issuer = certManager.stream().filter(r -> r.getKind().equals("Issuer")
              && ns.equals(r.getMetadata().getNamespace()) && ref.get("name").equals(r.getMetadata().getName()))
          .findFirst().orElseThrow(() -> new AssertionError("no Issuer " + ns + "/" + ref.get("name")));
      if (spec(issuer).get("ca") instanceof Map<?, ?> caIssuer) {
        assertTrue(certificates.stream().anyMatch(r -> ns.equals(r.getMetadata().getNamespace())
                && Boolean.TRUE.equals(spec(r).get("isCA")) && caIssuer.get("secretName").equals(spec(r).get("secretName"))),
            "Issuer " + ns + "/" + issuer.getMetadata().getName() + " signs with a CA Certificate of its namespace");
      }
    }
  }

  /**
   * Issue 34's done-means: no overlay renders a ClusterRole whose rules name Secrets, or every
   * resource ({@code *}), whatever the group; and no ClusterRoleBinding or RoleBinding hands the
   * worker a ClusterRole that does.
   */
  @ParameterizedTest
  @FieldSource("OVERLAYS")
  void noClusterRoleNamesSecretsOrEveryResource(String overlay) {
    List<HasMetadata> objects = Kustomize.render(overlay);
    List<ClusterRole> roles = Kustomize.all(objects, ClusterRole.class);
    assertFalse(roles.isEmpty(), overlay + " renders ClusterRoles");
    for (ClusterRole role : roles) {
      for (PolicyRule rule : role.getRules()) {
        List<String> resources = rule.getResources() == null ? List.of() : rule.getResources();
        assertFalse(resources.contains("secrets") || resources.contains("*"),
            overlay + ": ClusterRole " + role.getMetadata().getName() + " names secrets or *: " + rule);
      }
    }
  }

  /** The one list's Roles, as deploy/default and deploy/extension render them: namespace -> Role. */
  private static Map<String, Role> configReaders(List<HasMetadata> objects) {
    Map<String, Role> byNamespace = new HashMap<>();
    for (Role role : Kustomize.all(objects, Role.class)) {
      if (role.getMetadata().getName().equals(CONFIG_READER)) {
        byNamespace.put(role.getMetadata().getNamespace(), role);
      }
    }
    return byNamespace;
  }

  static final String CONFIG_READER = "inplace-worker-config";
  /** The rules of a namespace's Secret and ConfigMap reads: get by name, nothing else. */
  static final List<PolicyRule> CONFIG_READS = List.of(
      new io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder().withApiGroups("").withResources("configmaps")
          .withVerbs("get").build(),
      new io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder().withApiGroups("").withResources("secrets")
          .withVerbs("get").build());

  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"default", "extension"})
  void secretsAreReadOnlyThroughOneRoleAndRoleBindingPerListedNamespace(String overlay) {
    List<HasMetadata> objects = Kustomize.render(overlay);
    Map<String, Role> roles = configReaders(objects);
    assertFalse(roles.isEmpty(), overlay + ": the list of cluster namespaces renders Roles");
    assertFalse(roles.containsKey(NAMESPACE), "the worker's own namespace is not a cluster namespace");
    Set<String> bound = Set.copyOf(Kustomize.all(objects, RoleBinding.class).stream()
        .filter(b -> b.getMetadata().getName().equals(CONFIG_READER))
        .peek(b -> assertEquals("Role", b.getRoleRef().getKind()))
        .peek(b -> assertEquals(CONFIG_READER, b.getRoleRef().getName()))
        .peek(b -> assertWorkerSubject(b.getSubjects()))
        .map(b -> b.getMetadata().getNamespace()).toList());
    assertEquals(roles.keySet(), bound, overlay + ": every listed namespace's Role is bound, and nothing else");
    roles.forEach((ns, role) -> assertEquals(CONFIG_READS, role.getRules(), overlay + ": Role in " + ns));
  }

  @org.junit.jupiter.api.Test
  void theListOfClusterNamespacesMakesARoleAndARoleBindingForEachEntry() throws Exception {
    // A copy of deploy/ whose list names two namespaces: both get the Role and the binding.
    Path copy = Files.createTempDirectory("inplace-deploy-");
    try (Stream<Path> files = Files.walk(Kustomize.DEPLOY)) {
      for (Path from : files.toList()) {
        Path to = copy.resolve(Kustomize.DEPLOY.relativize(from).toString());
        if (Files.isDirectory(from)) {
          Files.createDirectories(to);
        } else {
          Files.copy(from, to);
        }
      }
    }
    Path list = copy.resolve("cluster-namespaces/list/namespaces.yaml");
    Files.writeString(list, Files.readString(list) + """
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata:
          name: inplace-worker-config
          namespace: team-a
        """);
    List<HasMetadata> objects;
    try {
      objects = Kustomize.render(copy.resolve("default"));
    } finally {
      try (Stream<Path> files = Files.walk(copy)) {
        for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
    Map<String, Role> roles = configReaders(objects);
    assertTrue(roles.containsKey("team-a"), roles.keySet().toString());
    assertEquals(2, roles.size(), roles.keySet().toString());
    RbacGrants grants = RbacGrants.of(objects, NAMESPACE, WORKER);
    for (String ns : roles.keySet()) {
      assertTrue(grants.allows(dev.inplace.sandbox.kube.ApiRequest.of("GET", "/api/v1/namespaces/" + ns + "/secrets/s")), ns);
    }
    assertFalse(grants.allows(dev.inplace.sandbox.kube.ApiRequest.of("GET", "/api/v1/namespaces/team-b/secrets/s")));
  }

  @org.junit.jupiter.api.Test
  void theNamespacedOverlayGrantsEveryNamespacedKindOnlyInTheWatchedNamespace() {
    List<HasMetadata> objects = Kustomize.render("namespaced");
    String watched = env(worker(deployment(objects)), WatcherOptions.WATCH_NAMESPACE).getValue();
    assertEquals("capi-clusters", watched, "the env follows watched/kustomization.yaml's namespace");
    // Cluster-wide: only cluster-scoped kinds (and the /metrics reviews), nothing the worker writes in a namespace.
    Set<String> clusterScoped = Set.of("inplacehostprofiles", "customresourcedefinitions", "tokenreviews",
        "subjectaccessreviews");
    for (ClusterRoleBinding b : Kustomize.all(objects, ClusterRoleBinding.class)) {
      for (PolicyRule rule : Kustomize.one(objects, ClusterRole.class, b.getRoleRef().getName()).getRules()) {
        assertTrue(clusterScoped.containsAll(rule.getResources()),
            "ClusterRole " + b.getRoleRef().getName() + " grants namespaced kinds cluster-wide: " + rule);
      }
    }
    // Every Role of the worker outside its own namespace is in the watched one.
    for (Role role : Kustomize.all(objects, Role.class)) {
      String ns = role.getMetadata().getNamespace();
      assertTrue(ns.equals(NAMESPACE) || ns.equals(watched), "Role " + role.getMetadata().getName() + " in " + ns);
    }
    assertEquals(CONFIG_READS, Kustomize.all(objects, Role.class).stream()
        .filter(r -> r.getMetadata().getName().equals(CONFIG_READER)).findFirst().orElseThrow().getRules(),
        "the same Secret and ConfigMap reads as deploy/cluster-namespaces");
    Role clusters = Kustomize.one(objects, Role.class, "inplace-worker-clusters");
    assertEquals(watched, clusters.getMetadata().getNamespace());
    assertEquals(Kustomize.one(Kustomize.render("default"), ClusterRole.class, "inplace-worker-clusters").getRules(),
        clusters.getRules(), "the same rules deploy/default grants cluster-wide");
    assertTrue(clusters.getRules().stream().anyMatch(r -> r.getResources().contains("machines")
        && r.getVerbs().contains("patch")), "Machines are patched through the Role");
  }

  private static EnvVar env(Container c, String name) {
    return c.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("the worker has no env " + name));
  }

  private static Optional<ContainerPort> containerPort(Container c, String name) {
    return c.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst();
  }

  /** The volume mounted at exactly this path. */
  private static Volume volumeAt(PodSpec pod, Container c, String path) {
    VolumeMount mount = c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(path)).findFirst()
        .orElseThrow(() -> new AssertionError("nothing is mounted at " + path));
    return pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
        .orElseThrow(() -> new AssertionError("mount " + mount.getName() + " has no volume"));
  }

  private static GenericKubernetesResource generic(List<HasMetadata> objects, String kind, String name) {
    return Kustomize.all(objects, GenericKubernetesResource.class).stream()
        .filter(r -> kind.equals(r.getKind()) && name.equals(r.getMetadata().getName())).findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> issuerRef(GenericKubernetesResource certificate) {
    return (Map<String, Object>) spec(certificate).get("issuerRef");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource r) {
    return new HashMap<>((Map<String, Object>) r.getAdditionalProperties().get("spec"));
  }
}
