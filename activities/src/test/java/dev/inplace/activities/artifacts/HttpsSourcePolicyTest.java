package dev.inplace.activities.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Artifacts the worker fetches over https: a URL that could carry a credential is refused without repeating it. */
class HttpsSourcePolicyTest {
  private static final String SHA = "cd".repeat(32);
  private final ArtifactSourcePolicy policy = new ArtifactSourcePolicy(Set.of("releases.example"), null, 1L << 30);

  private static Artifact binary(String source) {
    return new Artifact("k3s", ArtifactKind.BINARY, source, SHA, 1024, "/usr/local/bin/k3s", "0755");
  }

  @Test
  void aPlainUrlOnAnAllowedHostIsAccepted() {
    assertEquals(Optional.empty(), policy.problem(binary("https://releases.example/v1.31.2/k3s")));
  }

  @Test
  void aSignedOrTokenUrlIsRefusedAndTheRefusalDoesNotRepeatItsQuery() {
    for (String source : new String[] {
        "https://releases.example/k3s?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=deadbeef",
        "https://releases.example/k3s?token=s3cr3t",
        "https://releases.example/k3s#s3cr3t"}) {
      String why = policy.problem(binary(source)).orElseThrow();
      assertTrue(why.contains("artifact k3s: source URL must carry no query string or fragment"), why);
      assertFalse(why.contains("s3cr3t") || why.contains("AKIAEXAMPLE") || why.contains("deadbeef"), why);
    }
  }

  @Test
  void userInfoIsRefusedAsBefore() {
    String why = policy.problem(binary("https://user:s3cr3t@releases.example/k3s")).orElseThrow();
    assertTrue(why.contains("must name a host and carry no user info"), why);
    assertFalse(why.contains("s3cr3t"), why);
  }
}
