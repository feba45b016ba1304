package dev.inplace.activities.kube;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.temporal.failure.ApplicationFailure;

/**
 * Translates {@link KubernetesClientException} into the {@link UpgradeFailures} vocabulary at the
 * activity boundary.
 *
 * <ul>
 *   <li>404: the caller's not-found type ({@code NodeNotFound}, {@code MachineNotFound}, ...),
 *       non-retryable.
 *   <li>400, 401, 403, 405, 415, 422: {@code KubernetesApiError}, non-retryable. Bad credentials,
 *       missing RBAC and invalid requests do not fix themselves; retrying only delays the operator.
 *       They are not {@code PreflightFailed}, which means "the cluster is not fit for an upgrade".
 *   <li>409, 429, 5xx and transport errors (code 0): {@code KubernetesApiError}, retryable
 *       (conflicts are re-observed, overload and restarts pass).
 * </ul>
 *
 * Messages carry the HTTP code, the object and the API server's reason, never request bodies.
 */
public final class KubeFailures {
  private KubeFailures() {}

  /**
   * @param notFoundType failure type for a 404
   * @param what the object acted on, e.g. {@code node worker-1 in cluster ns/c1}
   */
  public static ApplicationFailure translate(
      KubernetesClientException e, String notFoundType, String what) {
    int code = e.getCode();
    if (code == 404) {
      return UpgradeFailures.nonRetryable(notFoundType, what + " not found");
    }
    String message = "Kubernetes API " + describe(e) + " for " + what;
    if (isTransient(e)) {
      return UpgradeFailures.retryable(UpgradeFailures.KUBERNETES_API_ERROR, message);
    }
    return UpgradeFailures.nonRetryable(UpgradeFailures.KUBERNETES_API_ERROR, message);
  }

  /** Whether trying again later may succeed: conflicts, throttling, server errors, I/O errors. */
  public static boolean isTransient(KubernetesClientException e) {
    int code = e.getCode();
    return code <= 0 || code == 409 || code == 429 || code >= 500;
  }

  /** {@code HTTP 403 (Forbidden: nodes "n1" is forbidden: ...)}, or the transport error. */
  static String describe(KubernetesClientException e) {
    if (e.getCode() <= 0) {
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      return "unreachable (" + root.getClass().getSimpleName() + ")";
    }
    StringBuilder text = new StringBuilder("HTTP ").append(e.getCode());
    if (e.getStatus() != null) {
      String reason = e.getStatus().getReason();
      String message = e.getStatus().getMessage();
      if (reason != null || message != null) {
        text.append(" (");
        if (reason != null) {
          text.append(reason);
        }
        if (message != null) {
          text.append(reason != null ? ": " : "").append(message);
        }
        text.append(')');
      }
    }
    return text.toString();
  }
}
