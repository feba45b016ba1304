package dev.inplace.activities.kube;

import dev.inplace.activities.support.KubernetesSecretSource;
import dev.inplace.activities.support.SecretSource;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The management-cluster client (owned by the caller) and one client per workload cluster, built
 * from the CAPI Secret {@code <cluster>-kubeconfig} (data key {@code value}).
 *
 * <p>Workload clients are cached for a short TTL because KCP can rotate that Secret. When the TTL
 * has passed the Secret is read again; an unchanged kubeconfig keeps its client, a changed one gets
 * a new client. A replaced client may still be in use by a running activity (a drain holds it for
 * minutes), so it is closed only after {@link #RETIRED_GRACE} or on {@link #close()}.
 *
 * <p>Workload clients retry a failed request at most {@link #RETRY_BACKOFF_LIMIT} times: fabric8
 * otherwise retries 429/5xx about ten times (~19 s), which would stall drain and wait loops that
 * poll on their own.
 */
public final class KubeClients implements Closeable {
  public static final String KUBECONFIG_KEY = "value";
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(60);
  static final int RETRY_BACKOFF_LIMIT = 0;
  static final int CONNECTION_TIMEOUT_MILLIS = 10_000;
  static final int REQUEST_TIMEOUT_MILLIS = 30_000;
  static final Duration RETIRED_GRACE = Duration.ofHours(1);

  private static final Logger log = LoggerFactory.getLogger(KubeClients.class);

  private final KubernetesClient management;
  private final SecretSource secrets;
  private final long ttlNanos;
  private final LongSupplier nanoClock;
  private final Map<ClusterRef, Cached> workload = new HashMap<>();
  private final List<Retired> retired = new ArrayList<>();
  private boolean closed;

  private record Cached(KubernetesClient client, byte[] digest, long readAtNanos) {}

  private record Retired(KubernetesClient client, long retiredAtNanos) {}

  /** Reads kubeconfig Secrets through the management client itself. */
  public KubeClients(KubernetesClient management) {
    this(management, new KubernetesSecretSource(management));
  }

  public KubeClients(KubernetesClient management, SecretSource secrets) {
    this(management, secrets, DEFAULT_TTL, System::nanoTime);
  }

  KubeClients(
      KubernetesClient management, SecretSource secrets, Duration ttl, LongSupplier nanoClock) {
    this.management = management;
    this.secrets = secrets;
    this.ttlNanos = ttl.toNanos();
    this.nanoClock = nanoClock;
  }

  /** The management cluster (CAPI objects, Secrets). */
  public KubernetesClient management() {
    return management;
  }

  /**
   * A client for the workload cluster.
   *
   * @throws io.temporal.failure.ApplicationFailure {@code SecretNotFound} when the kubeconfig
   *     Secret or its {@code value} key is missing, {@code InvalidRequest} when it holds anything
   *     but inline data ({@link KubeconfigGuard}), {@code KubernetesApiError} when it is not a usable
   *     kubeconfig
   */
  public synchronized KubernetesClient workload(ClusterRef cluster) {
    if (closed) {
      throw new IllegalStateException("KubeClients is closed");
    }
    long now = nanoClock.getAsLong();
    closeRetired(now);
    Cached cached = workload.get(cluster);
    if (cached != null && now - cached.readAtNanos() < ttlNanos) {
      return cached.client();
    }
    byte[] kubeconfig = readKubeconfig(cluster);
    byte[] digest = sha256(kubeconfig);
    if (cached != null && Arrays.equals(cached.digest(), digest)) {
      workload.put(cluster, new Cached(cached.client(), digest, now));
      return cached.client();
    }
    KubernetesClient client = build(cluster, kubeconfig);
    workload.put(cluster, new Cached(client, digest, now));
    if (cached != null) {
      retired.add(new Retired(cached.client(), now));
      log.info("Kubeconfig Secret of cluster {} changed; using a new workload client", cluster);
    } else {
      log.debug("Built workload client for cluster {}", cluster);
    }
    return client;
  }

  private byte[] readKubeconfig(ClusterRef cluster) {
    String secretName = cluster.name() + "-kubeconfig";
    byte[] kubeconfig = secrets.read(cluster.namespace(), secretName).get(KUBECONFIG_KEY);
    if (kubeconfig == null || kubeconfig.length == 0) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.SECRET_NOT_FOUND,
          "Secret " + cluster.namespace() + "/" + secretName + " has no data key '"
              + KUBECONFIG_KEY + "'");
    }
    return kubeconfig;
  }

  private static KubernetesClient build(ClusterRef cluster, byte[] kubeconfig) {
    String text = new String(kubeconfig, StandardCharsets.UTF_8);
    // Before fabric8 sees it: it would run exec plugins and read files the kubeconfig names.
    KubeconfigGuard.problem(text).ifPresent(why -> {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
          "kubeconfig Secret of cluster " + cluster + " is refused: " + why);
    });
    Config config;
    try {
      config = Config.fromKubeconfig(text);
    } catch (RuntimeException e) {
      // The parser's message may quote the document: report the cause's type only.
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.KUBERNETES_API_ERROR,
          "kubeconfig of cluster " + cluster + " cannot be parsed (" + e.getClass().getSimpleName()
              + ")");
    }
    config.setRequestRetryBackoffLimit(RETRY_BACKOFF_LIMIT);
    config.setConnectionTimeout(CONNECTION_TIMEOUT_MILLIS);
    config.setRequestTimeout(REQUEST_TIMEOUT_MILLIS);
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  private void closeRetired(long now) {
    retired.removeIf(
        r -> {
          if (now - r.retiredAtNanos() >= RETIRED_GRACE.toNanos()) {
            r.client().close();
            return true;
          }
          return false;
        });
  }

  private static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always available", e);
    }
  }

  /** Closes the workload clients; the management client belongs to whoever created it. */
  @Override
  public synchronized void close() {
    closed = true;
    workload.values().forEach(c -> c.client().close());
    workload.clear();
    retired.forEach(r -> r.client().close());
    retired.clear();
  }
}
