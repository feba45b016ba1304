package dev.inplace.activities.artifacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** OS images the host pulls (Kairos oci:): the registry host is allowlisted and size-capped like https. */
class RegistrySourcePolicyTest {
  private static final String SHA = "ab".repeat(32);

  private static Artifact image(String registry, long size) {
    return new Artifact("os-image", ArtifactKind.OS_IMAGE, "oci:" + registry + "/kairos/ubuntu@sha256:" + SHA, SHA, size,
        ArtifactRules.KAIROS_ACTIVE_IMAGE, "0644");
  }

  @Test
  void theRegistryHostMustBeInTheAllowlist() {
    ArtifactSourcePolicy policy = new ArtifactSourcePolicy(Set.of("quay.io"), null, 1L << 30);
    assertEquals(Optional.empty(), policy.problem(image("quay.io", 1)));
    assertEquals(Optional.empty(), policy.problem(image("quay.io:443", 1)));
    String why = policy.problem(image("evil.example.com", 1)).orElseThrow();
    assertTrue(why.contains("registry evil.example.com is not in the allowed artifact hosts"), why);
  }

  @Test
  void theSizeCapHoldsForPulledImagesToo() {
    ArtifactSourcePolicy policy = new ArtifactSourcePolicy(Set.of(), null, 1000);
    assertTrue(policy.problem(image("quay.io", 1001)).orElseThrow().contains("above the worker's limit"));
  }

  @Test
  void theWorkerNeverFetchesAnImageTheHostPulls(@TempDir Path dir) {
    ArtifactCache cache = new ArtifactCache(dir, ArtifactSourcePolicy.httpsOnly());
    ApplicationFailure e = assertThrows(ApplicationFailure.class, () -> cache.fetch(image("quay.io", 1)));
    assertEquals(UpgradeFailures.INVALID_REQUEST, e.getType());
    assertTrue(e.getOriginalMessage().contains("pulled by the host"), e.getOriginalMessage());
  }
}
