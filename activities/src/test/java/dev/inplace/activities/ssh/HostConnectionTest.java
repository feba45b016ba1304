package dev.inplace.activities.ssh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class HostConnectionTest {
  @Test
  void anUploadKeepsAboutTwoMebibytesOfWritesInFlight() {
    // OpenSSH's and MINA's sessions take 32 KiB packets: 32,768 minus an SFTP write's overhead.
    assertEquals(65, HostConnection.writesInFlight(32_739));
    assertEquals(64, HostConnection.writesInFlight(32 * 1024));
    assertEquals(16, HostConnection.writesInFlight(128 * 1024));
  }

  @Test
  void neverFewerWritesInFlightThanSshjsOwnTransfer() {
    assertEquals(16, HostConnection.writesInFlight(256 * 1024));
    assertEquals(16, HostConnection.writesInFlight(4 << 20));
  }

  @Test
  void aChunkOfNothingIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> HostConnection.writesInFlight(0));
  }
}
