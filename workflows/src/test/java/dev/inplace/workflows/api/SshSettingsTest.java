package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class SshSettingsTest {
  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(strings = {"bastion", "bastion:22", "10.0.0.1:2222", "[fd00::1]:22", " bastion.example:65535 "})
  void aJumpHostIsHostAndAnOptionalPort(String jumpHost) {
    assertEquals(Optional.empty(), SshSettings.jumpHostProblem(jumpHost));
  }

  @ParameterizedTest
  @ValueSource(strings = {"bastion:0", "bastion:99999", "bastion:ssh", ":22", "bas tion:22", "bastion:"})
  void anythingElseIsNamed(String jumpHost) {
    String problem = SshSettings.jumpHostProblem(jumpHost).orElseThrow();
    assertTrue(problem.startsWith("jump host must be host[:port] with a port from 1 to 65535, got '"), problem);
  }
}
