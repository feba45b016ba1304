package dev.inplace.activities.ssh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.function.Executable;

/** Assertions on the ApplicationFailures activities throw. */
public final class FailureAssertions {
  private FailureAssertions() {}

  /**
   * Runs {@code call}, expects an ApplicationFailure (directly or through a stub) of {@code type}.
   */
  public static ApplicationFailure assertFailure(String type, Executable call) {
    RuntimeException thrown = assertThrows(RuntimeException.class, call);
    ApplicationFailure failure = applicationFailure(thrown);
    assertEquals(type, failure.getType(), "failure type; message: " + failure.getOriginalMessage());
    return failure;
  }

  public static ApplicationFailure applicationFailure(Throwable thrown) {
    Throwable t = thrown;
    if (t instanceof ActivityFailure && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof ApplicationFailure failure) {
      return failure;
    }
    throw new AssertionError("expected an ApplicationFailure, got " + thrown, thrown);
  }

  /** No line of the private key's body appears anywhere in the failure or its causes. */
  public static void assertNoKeyMaterial(Throwable failure, String privateKeyText) {
    StringWriter trace = new StringWriter();
    failure.printStackTrace(new PrintWriter(trace));
    String all = trace.toString();
    assertFalse(all.contains("PRIVATE KEY"), "failure mentions a private key block: " + all);
    for (String line : privateKeyText.split("\n")) {
      if (!line.startsWith("-----") && line.length() > 16) {
        assertFalse(all.contains(line), "failure contains private key text: " + all);
      }
    }
  }
}
