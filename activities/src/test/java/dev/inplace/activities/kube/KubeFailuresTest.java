package dev.inplace.activities.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class KubeFailuresTest {

  private static KubernetesClientException http(int code, String reason, String message) {
    return new KubernetesClientException(
        "Failure executing: GET",
        code,
        new StatusBuilder().withCode(code).withReason(reason).withMessage(message).build());
  }

  @Test
  void notFoundBecomesTheCallersNonRetryableType() {
    ApplicationFailure failure =
        KubeFailures.translate(
            http(404, "NotFound", "nodes \"w1\" not found"), UpgradeFailures.NODE_NOT_FOUND, "node w1");

    assertEquals(UpgradeFailures.NODE_NOT_FOUND, failure.getType());
    assertTrue(failure.isNonRetryable());
    assertEquals("node w1 not found", failure.getOriginalMessage());
  }

  @ParameterizedTest
  @CsvSource({"400,true", "401,true", "403,true", "422,true", "409,false", "429,false", "500,false", "503,false"})
  void authAndValidationErrorsAreFinalWhileConflictsThrottlingAndServerErrorsRetry(
      int code, boolean nonRetryable) {
    ApplicationFailure failure =
        KubeFailures.translate(http(code, "Reason", "msg"), UpgradeFailures.NODE_NOT_FOUND, "node w1");

    assertEquals(UpgradeFailures.KUBERNETES_API_ERROR, failure.getType());
    assertEquals(nonRetryable, failure.isNonRetryable());
    assertTrue(failure.getOriginalMessage().contains("HTTP " + code), failure.getOriginalMessage());
    assertTrue(failure.getOriginalMessage().contains("node w1"));
  }

  @Test
  void transportErrorIsRetryable() {
    KubernetesClientException e =
        new KubernetesClientException("boom", new IOException("connection refused"));

    ApplicationFailure failure = KubeFailures.translate(e, UpgradeFailures.NODE_NOT_FOUND, "node w1");

    assertFalse(failure.isNonRetryable());
    assertTrue(failure.getOriginalMessage().contains("unreachable (IOException)"));
  }
}
