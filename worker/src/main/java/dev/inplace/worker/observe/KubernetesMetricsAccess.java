package dev.inplace.worker.observe;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /metrics} for callers the management API server vouches for: the bearer token is checked
 * with a TokenReview, and its user must be allowed {@code get} on the non-resource URL
 * {@code /metrics} (a SubjectAccessReview; deploy/rbac's ClusterRole {@code inplace-metrics-reader}
 * grants it). Decisions are kept for a minute (refusals for ten seconds) under the token's sha256,
 * so a scrape every 15 s costs two API calls a minute; the token itself is never kept or logged. The
 * reviews go through a client of their own with short timeouts and no retries: an API server that
 * does not answer makes a scrape 503 within seconds instead of holding a server thread.
 */
public final class KubernetesMetricsAccess implements MetricsAccess {
  private static final Logger log = LoggerFactory.getLogger(KubernetesMetricsAccess.class);
  static final String PATH = "/metrics";
  private static final Duration ALLOWED_FOR = Duration.ofMinutes(1);
  private static final Duration REFUSED_FOR = Duration.ofSeconds(10);
  private static final int MAX_KEPT = 256;
  private static final int REVIEW_TIMEOUT_MILLIS = 3000;

  private record Kept(Decision decision, Instant until) {}

  private final Supplier<KubernetesClient> management;
  private final Clock clock;
  private final Map<String, Kept> kept = new ConcurrentHashMap<>();
  private KubernetesClient reviews;

  /** @param management the management cluster's client; null until the worker has built it (then 503) */
  public KubernetesMetricsAccess(Supplier<KubernetesClient> management) {
    this(management, Clock.systemUTC());
  }

  KubernetesMetricsAccess(Supplier<KubernetesClient> management, Clock clock) {
    this.management = management;
    this.clock = clock;
  }

  @Override
  public Decision decide(String authorizationHeader) {
    if (authorizationHeader == null || !authorizationHeader.regionMatches(true, 0, "Bearer ", 0, 7)
        || authorizationHeader.substring(7).isBlank()) {
      return Decision.UNAUTHENTICATED;
    }
    String token = authorizationHeader.substring(7).trim();
    String key = sha256(token);
    Instant now = clock.instant();
    Kept known = kept.get(key);
    if (known != null && now.isBefore(known.until())) {
      return known.decision();
    }
    KubernetesClient client = reviewClient();
    if (client == null) {
      return Decision.UNAVAILABLE;
    }
    Decision decision;
    try {
      decision = review(client, token);
    } catch (KubernetesClientException e) {
      log.warn("cannot check a /metrics caller: the API server answered HTTP {} ({})", e.getCode(),
          e.getCause() == null ? "no cause" : e.getCause().getClass().getSimpleName());
      return Decision.UNAVAILABLE;
    } catch (RuntimeException e) {
      log.warn("cannot check a /metrics caller: {}", e.getClass().getSimpleName());
      return Decision.UNAVAILABLE;
    }
    if (kept.size() >= MAX_KEPT) {
      kept.clear(); // many distinct tokens: start over rather than grow
    }
    kept.put(key, new Kept(decision, now.plus(decision == Decision.ALLOWED ? ALLOWED_FOR : REFUSED_FOR)));
    return decision;
  }

  /** The reviews' own client, from the management client's configuration once it exists. */
  private synchronized KubernetesClient reviewClient() {
    if (reviews == null) {
      KubernetesClient base = management.get();
      if (base == null) {
        return null;
      }
      reviews = new KubernetesClientBuilder().withConfig(new ConfigBuilder(base.getConfiguration())
          .withConnectionTimeout(REVIEW_TIMEOUT_MILLIS)
          .withRequestTimeout(REVIEW_TIMEOUT_MILLIS)
          .withRequestRetryBackoffLimit(0)
          .build()).build();
    }
    return reviews;
  }

  @Override
  public synchronized void close() {
    if (reviews != null) {
      reviews.close();
    }
  }

  private static Decision review(KubernetesClient client, String token) {
    TokenReview review = client.authentication().v1().tokenReviews()
        .create(new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build());
    if (review.getStatus() == null || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())
        || review.getStatus().getUser() == null) {
      return Decision.UNAUTHENTICATED;
    }
    UserInfo user = review.getStatus().getUser();
    SubjectAccessReview access = client.authorization().v1().subjectAccessReview()
        .create(new SubjectAccessReviewBuilder().withNewSpec()
            .withUser(user.getUsername())
            .withUid(user.getUid())
            .withGroups(user.getGroups())
            .withExtra(user.getExtra())
            .withNewNonResourceAttributes().withPath(PATH).withVerb("get").endNonResourceAttributes()
            .endSpec().build());
    boolean allowed = access.getStatus() != null && Boolean.TRUE.equals(access.getStatus().getAllowed());
    if (!allowed) {
      log.warn("refused /metrics to {}: not allowed get {}", user.getUsername(), PATH);
    }
    return allowed ? Decision.ALLOWED : Decision.FORBIDDEN;
  }

  private static String sha256(String token) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
