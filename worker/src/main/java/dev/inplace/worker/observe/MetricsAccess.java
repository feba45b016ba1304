package dev.inplace.worker.observe;

/**
 * Who may read {@code /metrics}: the Authorization header of a scrape in, a decision out. In a
 * cluster the worker asks the API server (TokenReview, then a SubjectAccessReview for
 * {@code get /metrics}), as controller-runtime's secure metrics and kube-rbac-proxy do; {@link
 * #open()} serves everyone (local runs on loopback, {@code INPLACE_METRICS_AUTH=none}).
 */
public interface MetricsAccess extends AutoCloseable {
  /** What a scrape gets: 200, 401, 403, or 503 while the API server cannot be asked. */
  enum Decision {
    ALLOWED(200),
    UNAUTHENTICATED(401),
    FORBIDDEN(403),
    UNAVAILABLE(503);

    final int status;

    Decision(int status) {
      this.status = status;
    }
  }

  Decision decide(String authorizationHeader);

  /** Releases what the checks hold (a client of their own); nothing by default. */
  @Override
  default void close() {}

  /** Every caller may read the metrics. */
  static MetricsAccess open() {
    return header -> Decision.ALLOWED;
  }
}
