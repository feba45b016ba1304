package dev.inplace.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.SshClientOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InplaceWorkerSshOptionsTest {

  @Test
  void idleConnectionsAreKeptTwoMinutesUnlessConfigured() {
    assertEquals(SshClientOptions.DEFAULT_IDLE_TIMEOUT, InplaceWorker.sshOptions(Map.of()).idleTimeout());
    assertEquals(
        Duration.ZERO, InplaceWorker.sshOptions(Map.of("INPLACE_SSH_IDLE_SECONDS", "0")).idleTimeout());
    assertEquals(
        Duration.ofSeconds(30),
        InplaceWorker.sshOptions(Map.of("INPLACE_SSH_IDLE_SECONDS", "30")).idleTimeout());
  }

  @Test
  void aMalformedIdleTimeIsRefusedByName() {
    for (String bad : new String[] {"-1", "soon", "3601"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> InplaceWorker.sshOptions(Map.of("INPLACE_SSH_IDLE_SECONDS", bad)));
      assertTrue(e.getMessage().contains("INPLACE_SSH_IDLE_SECONDS"), e.getMessage());
    }
  }
}
