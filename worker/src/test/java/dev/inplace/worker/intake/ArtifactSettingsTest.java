package dev.inplace.worker.intake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ArtifactSettingsTest {
  @Test
  void withoutAConfiguredAllowlistOnlyTheDistributionsReleaseHostsAreAllowed() {
    ArtifactSourcePolicy policy = ArtifactSettings.fromEnvironment(Map.of());
    assertEquals(ArtifactSourcePolicy.RELEASE_HOSTS, policy.allowedHosts());
    assertTrue(policy.hostAllowed("github.com"));
    assertTrue(policy.hostAllowed("dl.k8s.io"));
    assertFalse(policy.hostAllowed("169.254.169.254"));
    assertFalse(policy.hostAllowed("metadata.google.internal"));
  }

  @Test
  void aStarAllowsAnyHostAndMustStandAlone() {
    assertTrue(ArtifactSettings.fromEnvironment(Map.of(ArtifactSettings.ARTIFACT_HOSTS, "*")).hostAllowed("mirror.corp"));
    IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
        () -> ArtifactSettings.fromEnvironment(Map.of(ArtifactSettings.ARTIFACT_HOSTS, "*, github.com")));
    assertTrue(mixed.getMessage().contains("stands alone"), mixed.getMessage());
  }

  @Test
  void aConfiguredListReplacesTheDefaults() {
    ArtifactSourcePolicy policy = ArtifactSettings.fromEnvironment(Map.of(ArtifactSettings.ARTIFACT_HOSTS, "mirror.corp"));
    assertTrue(policy.hostAllowed("mirror.corp"));
    assertFalse(policy.hostAllowed("github.com"));
  }
}
