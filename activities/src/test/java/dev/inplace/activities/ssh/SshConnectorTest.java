package dev.inplace.activities.ssh;

import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.inplace.workflows.failure.UpgradeFailures;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.schmizz.sshj.common.Factory;
import org.junit.jupiter.api.Test;

class SshConnectorTest {

  @Test
  void prefersJceAesGcmAndDropsChacha() {
    List<String> ciphers =
        SshConnector.fastCipherConfig().getCipherFactories().stream()
            .map(Factory.Named::getName)
            .toList();

    assertEquals(
        List.of("aes128-gcm@openssh.com", "aes256-gcm@openssh.com"), ciphers.subList(0, 2));
    assertFalse(ciphers.stream().anyMatch(c -> c.startsWith("chacha20")), ciphers.toString());
  }

  @Test
  void parsesJumpHostWithAndWithoutPort() {
    assertEquals(
        new SshConnector.JumpHost("bastion.example.com", 22),
        SshConnector.JumpHost.parse("bastion.example.com"));
    assertEquals(
        new SshConnector.JumpHost("10.0.0.1", 2222), SshConnector.JumpHost.parse("10.0.0.1:2222"));
    assertFailure(
        UpgradeFailures.INVALID_REQUEST, () -> SshConnector.JumpHost.parse("bastion:http"));
  }

  @Test
  void stderrCaptureKeepsTheEndAndStdoutCaptureTheStart() {
    OutputCapture tail = new OutputCapture(8, true);
    OutputCapture head = new OutputCapture(8, false);
    byte[] text = "0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    tail.accept(text, text.length);
    head.accept(text, text.length);

    assertEquals("89abcdef", tail.text());
    assertEquals("01234567", head.text());
    assertEquals(true, tail.truncated());
  }

  @Test
  void scriptOutputReadsKeyValueLines() {
    ScriptOutput out = new ScriptOutput(0, "arch=amd64\nfile=/a 1\nfile=/b absent\nversion=\n", "");

    assertEquals("amd64", out.value("arch"));
    assertEquals(List.of("/a 1", "/b absent"), out.values("file"));
    assertEquals("", out.value("version"));
    assertEquals(null, out.value("missing"));
  }
}
