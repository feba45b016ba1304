package dev.inplace.activities.ssh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.common.DisconnectReason;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.transport.Transport;
import org.junit.jupiter.api.Test;

/**
 * A server that closes the socket as soon as it finds no algorithm in common can win the race
 * against sshj's "connected" check before the key exchange, which then throws a bare
 * IllegalStateException ("Not connected"). The connector must still report the typed reason.
 */
class SshHandshakeCutTest {
  private static final String HOST = "10.0.0.7:22";

  @Test
  void aTransportThatDiedOfNoCommonAlgorithmIsReportedAsAlgorithmsUnsupported() throws IOException {
    Transport transport = mock(Transport.class);
    when(transport.isRunning()).thenReturn(false);
    doThrow(
            new TransportException(
                DisconnectReason.KEY_EXCHANGE_FAILED,
                "Unable to reach a settlement of HostKeyAlgorithms: [ssh-ed25519, rsa-sha2-512]"
                    + " and [ssh-rsa]"))
        .when(transport)
        .join(anyInt(), any(TimeUnit.class));

    ApplicationFailure failure =
        SshFailures.handshakeCut(
            HOST, transport, new IllegalStateException("Not connected"), noPins());

    assertEquals(UpgradeFailures.SSH_ALGORITHMS_UNSUPPORTED, failure.getType());
    assertTrue(failure.isNonRetryable());
    assertTrue(failure.getOriginalMessage().contains("host key"), failure.getOriginalMessage());
    assertTrue(failure.getOriginalMessage().contains("ssh-rsa"), failure.getOriginalMessage());
  }

  @Test
  void aCutWithoutAKnownCauseIsAnUnreachableHostRetriedLater() throws IOException {
    ApplicationFailure failure =
        SshFailures.handshakeCut(HOST, null, new IllegalStateException("Not connected"), noPins());

    assertEquals(UpgradeFailures.HOST_UNREACHABLE, failure.getType());
    assertFalse(failure.isNonRetryable());
    assertTrue(
        failure.getOriginalMessage().contains("closed the connection during the handshake"),
        failure.getOriginalMessage());
  }

  private static PinnedHostKeys noPins() throws IOException {
    String line = "[10.0.0.7]:22 " + TestKeys.publicKeyEntry(TestKeys.generate().getPublic()) + "\n";
    return PinnedHostKeys.parse(line.getBytes(StandardCharsets.UTF_8));
  }
}
