package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.api.failure.v1.Failure;
import io.temporal.common.converter.DataConverter;
import io.temporal.failure.ApplicationFailure;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedactingFailureConverterTest {
  private static final List<String> SECRETS = List.of("t0k3n-1", "hunter2", "MIIEpAIBAAKCAQEAu1SU1", "eyJhbGciOi.x.y");

  @Test
  void aFailureAndItsCausesGoIntoHistoryWithoutCredentialsButWithTheirTypeAndText() {
    IllegalStateException cause = new IllegalStateException(
        "kubeconfig rejected: token: t0k3n-1 -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1\n-----END RSA PRIVATE KEY-----");
    ApplicationFailure failure = ApplicationFailure.newNonRetryableFailureWithCause(
        "install failed on cp-1: {\"password\":\"hunter2\"} Authorization: Bearer eyJhbGciOi.x.y",
        UpgradeFailures.INSTALL_FAILED, cause, "token: t0k3n-1");

    for (DataConverter converter : List.of(PayloadEncryption.plain(), PayloadEncryption.fromEnvironment(java.util.Map.of()))) {
      Failure written = converter.exceptionToFailure(failure);

      String all = written.toString();
      for (String secret : SECRETS) {
        assertFalse(all.contains(secret), secret + " in " + all);
      }
      assertEquals("install failed on cp-1: {\"password\":\"<redacted>\"} Authorization: Bearer <redacted>",
          written.getMessage());
      assertEquals(UpgradeFailures.INSTALL_FAILED, written.getApplicationFailureInfo().getType());
      assertTrue(written.getApplicationFailureInfo().getNonRetryable());
      assertEquals("kubeconfig rejected: token: <redacted> -----BEGIN RSA PRIVATE KEY-----<redacted>-----END RSA PRIVATE KEY-----",
          written.getCause().getMessage());
      ApplicationFailure back = (ApplicationFailure) converter.failureToException(written);
      assertEquals("token: <redacted>", back.getDetails().get(String.class));
    }
  }
}
