package dev.inplace.sandbox.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * TokenReview and SubjectAccessReview as a real API server answers them, for the sandbox's own
 * tokens: the administrator (group {@code system:masters}: allowed everything), the worker's service
 * account, and a Prometheus service account bound to {@code inplace-metrics-reader} (allowed
 * {@code get /metrics} only). Any other token is not authenticated. The stock mock stores a review
 * and hands it back without a status.
 */
final class AccessReviews {
  private static final ObjectMapper JSON = new ObjectMapper();

  private record Identity(String username, List<String> groups) {}

  private static final Map<String, Identity> IDENTITIES = Map.of(
      SandboxApiServer.ADMIN_TOKEN, new Identity("sandbox-admin", List.of("system:masters", "system:authenticated")),
      SandboxApiServer.WORKER_TOKEN, new Identity("system:serviceaccount:inplace-system:inplace-worker",
          List.of("system:serviceaccounts", "system:authenticated")),
      SandboxApiServer.METRICS_READER_TOKEN, new Identity("system:serviceaccount:monitoring:prometheus",
          List.of("system:serviceaccounts", "system:authenticated")));

  private AccessReviews() {}

  /** The TokenReview with its status: authenticated, with the user, for a sandbox token only. */
  static String tokenReview(String body) throws java.io.IOException {
    ObjectNode review = (ObjectNode) JSON.readTree(body);
    Identity who = IDENTITIES.get(review.path("spec").path("token").asText(""));
    ObjectNode status = review.putObject("status");
    status.put("authenticated", who != null);
    if (who != null) {
      ObjectNode user = status.putObject("user");
      user.put("username", who.username());
      user.put("uid", "uid-" + who.username().hashCode());
      who.groups().forEach(user.putArray("groups")::add);
    }
    ((ObjectNode) review.path("spec")).remove("token"); // as the API server: the token is not echoed
    return JSON.writeValueAsString(review);
  }

  /** The SubjectAccessReview with its status: administrators may do anything, the reader get /metrics. */
  static String subjectAccessReview(String body) throws java.io.IOException {
    ObjectNode review = (ObjectNode) JSON.readTree(body);
    JsonNode spec = review.path("spec");
    boolean masters = false;
    for (JsonNode group : spec.path("groups")) {
      masters |= group.asText().equals("system:masters");
    }
    JsonNode nonResource = spec.path("nonResourceAttributes");
    boolean metricsReader = spec.path("user").asText().equals(IDENTITIES.get(SandboxApiServer.METRICS_READER_TOKEN).username())
        && nonResource.path("path").asText().equals("/metrics") && nonResource.path("verb").asText().equals("get");
    ObjectNode status = review.putObject("status");
    status.put("allowed", masters || metricsReader);
    if (!(masters || metricsReader)) {
      status.put("reason", "no RBAC rule allows it (sandbox)");
    }
    return JSON.writeValueAsString(review);
  }
}
