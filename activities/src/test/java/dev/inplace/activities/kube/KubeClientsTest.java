package dev.inplace.activities.kube;

import static dev.inplace.activities.kube.KubeFixtures.CLUSTER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.support.KubernetesSecretSource;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.failure.ApplicationFailure;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true, https = false)
class KubeClientsTest {
  KubernetesMockServer server;
  KubernetesClient client;

  private final AtomicLong nanos = new AtomicLong();

  private KubeClients clients() {
    return new KubeClients(
        client, new KubernetesSecretSource(client), Duration.ofSeconds(60), nanos::get);
  }

  @Test
  void workloadClientIsBuiltFromTheClusterKubeconfigSecret() {
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(server.url("/")));
    client.nodes().resource(KubeFixtures.node("w1", true, "v1.31.2")).create();

    try (KubeClients clients = clients()) {
      KubernetesClient workload = clients.workload(CLUSTER);

      assertEquals("w1", workload.nodes().withName("w1").get().getMetadata().getName());
      assertEquals(KubeClients.RETRY_BACKOFF_LIMIT, workload.getConfiguration().getRequestRetryBackoffLimit());
      assertEquals(KubeClients.REQUEST_TIMEOUT_MILLIS, workload.getConfiguration().getRequestTimeout());
    }
  }

  @Test
  void workloadClientIsCachedUntilTheTtlThenKeptWhileTheKubeconfigIsUnchanged() {
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(server.url("/")));
    try (KubeClients clients = clients()) {
      KubernetesClient first = clients.workload(CLUSTER);
      client.secrets().inNamespace(CLUSTER.namespace()).withName("c1-kubeconfig").delete();

      assertSame(first, clients.workload(CLUSTER), "within the TTL the Secret is not read again");

      nanos.addAndGet(Duration.ofSeconds(61).toNanos());
      assertThrows(ApplicationFailure.class, () -> clients.workload(CLUSTER));

      KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(server.url("/")));
      assertSame(first, clients.workload(CLUSTER), "same kubeconfig, same client");
    }
  }

  @Test
  void rotatedKubeconfigGetsANewClientAfterTheTtl() {
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(server.url("/")));
    try (KubeClients clients = clients()) {
      KubernetesClient first = clients.workload(CLUSTER);
      String rotated = KubeFixtures.kubeconfig(server.url("/")).replace("test-token", "new-token");
      KubeFixtures.createKubeconfigSecret(client, CLUSTER, rotated);

      nanos.addAndGet(Duration.ofSeconds(61).toNanos());
      KubernetesClient second = clients.workload(CLUSTER);

      assertNotSame(first, second);
      // The old client may still serve a running drain: it is not closed yet.
      assertTrue(first.nodes().list().getItems().isEmpty());
    }
  }

  @Test
  void missingSecretFailsWithSecretNotFoundNamingIt() {
    try (KubeClients clients = clients()) {
      ApplicationFailure failure =
          assertThrows(ApplicationFailure.class, () -> clients.workload(CLUSTER));

      assertEquals(UpgradeFailures.SECRET_NOT_FOUND, failure.getType());
      assertTrue(failure.isNonRetryable());
      assertTrue(failure.getOriginalMessage().contains("capi-system/c1-kubeconfig"));
    }
  }

  @Test
  void secretWithoutValueKeyFailsWithSecretNotFound() {
    client
        .secrets()
        .inNamespace(CLUSTER.namespace())
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withNamespace(CLUSTER.namespace())
                .withName("c1-kubeconfig")
                .endMetadata()
                .addToData("other", Base64.getEncoder().encodeToString("x".getBytes(StandardCharsets.UTF_8)))
                .build())
        .create();
    try (KubeClients clients = clients()) {
      ApplicationFailure failure =
          assertThrows(ApplicationFailure.class, () -> clients.workload(CLUSTER));

      assertEquals(UpgradeFailures.SECRET_NOT_FOUND, failure.getType());
      assertTrue(failure.getOriginalMessage().contains("'value'"));
    }
  }

  @Test
  void unparseableKubeconfigFailsWithoutQuotingIt() {
    String secretLooking = "client-key-data: c2VjcmV0LWtleS1tYXRlcmlhbA== : : [";
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, secretLooking);
    try (KubeClients clients = clients()) {
      ApplicationFailure failure =
          assertThrows(ApplicationFailure.class, () -> clients.workload(CLUSTER));

      assertEquals(UpgradeFailures.INVALID_REQUEST, failure.getType());
      assertFalse(failure.getOriginalMessage().contains("c2VjcmV0"), failure.getOriginalMessage());
    }
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
    "exec | users | user | 'exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, touch MARKER]}' | it runs a command in the worker",
    "auth-provider | users | user | 'auth-provider: {name: oidc, config: {client-id: x}}' | it runs an auth plugin",
    "tokenFile | users | user | 'tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token' | it reads a file of the worker",
    "client-certificate | users | user | 'client-certificate: /etc/worker/tls.crt' | use client-certificate-data",
    "client-key | users | user | 'client-key: /etc/worker/tls.key' | use client-key-data",
    "certificate-authority | clusters | cluster | 'certificate-authority: /etc/ssl/ca.crt' | use certificate-authority-data",
    "proxy-url | clusters | cluster | 'proxy-url: http://evil.example:3128' | only inline data is accepted",
  })
  void everyFormButInlineDataIsRefusedBeforeParsing(
      String form, String list, String field, String entry, String why, @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
    java.nio.file.Path marker = tmp.resolve("ran");
    String yaml = KubeFixtures.kubeconfig(server.url("/"))
        .replace("    token: test-token-not-a-secret", "    token: test-token-not-a-secret\n    " + (field.equals("user") ? entry : "x: y"))
        .replace("    server: " + server.url("/"), "    server: " + server.url("/") + (field.equals("cluster") ? "\n    " + entry : ""))
        .replace("MARKER", marker.toString());
    if (field.equals("cluster")) {
      yaml = yaml.replace("\n    x: y", "");
    }
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, yaml);
    try (KubeClients clients = clients()) {
      ApplicationFailure failure = assertThrows(ApplicationFailure.class, () -> clients.workload(CLUSTER));

      assertEquals(UpgradeFailures.INVALID_REQUEST, failure.getType());
      String expected = list + "[" + (field.equals("user") ? "admin" : "workload") + "]." + field + "." + form
          + " is not allowed";
      assertTrue(failure.getOriginalMessage().contains(expected), failure.getOriginalMessage());
      assertTrue(failure.getOriginalMessage().contains(why), failure.getOriginalMessage());
      assertFalse(failure.getOriginalMessage().contains("/etc/"), "never a value: " + failure.getOriginalMessage());
      assertFalse(java.nio.file.Files.exists(marker), "the exec command must never run");
    }
  }

  @Test
  void secretSourceDecodesDataByKey() {
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, "kubeconfig text");

    Map<String, byte[]> data = new KubernetesSecretSource(client).read("capi-system", "c1-kubeconfig");

    assertEquals("kubeconfig text", new String(data.get("value"), StandardCharsets.UTF_8));
  }
}
