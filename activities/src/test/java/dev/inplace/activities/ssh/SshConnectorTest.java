package dev.inplace.activities.ssh;

import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.schmizz.sshj.common.Factory;
import org.junit.jupiter.api.Test;

class SshConnectorTest {

  @Test
  void offersOnlyModernAlgorithmsWithJceAesGcmFirst() {
    var config = SshConnector.modernConfig();
    List<String> ciphers = names(config.getCipherFactories());
    List<String> kex = names(config.getKeyExchangeFactories());
    List<String> hostKeys = names(config.getKeyAlgorithms());
    List<String> macs = names(config.getMACFactories());

    assertEquals(List.of("aes128-gcm@openssh.com", "aes256-gcm@openssh.com"), ciphers.subList(0, 2));
    for (String legacy : List.of("3des", "arcfour", "blowfish", "cbc", "cast128")) {
      assertFalse(ciphers.stream().anyMatch(c -> c.contains(legacy)), ciphers.toString());
    }
    assertFalse(kex.stream().anyMatch(k -> k.contains("sha1") || k.startsWith("diffie")), kex.toString());
    assertFalse(hostKeys.contains("ssh-rsa") || hostKeys.contains("ssh-dss"), hostKeys.toString());
    assertFalse(macs.stream().anyMatch(m -> m.contains("md5") || m.contains("sha1")), macs.toString());
    assertEquals(SshConnector.MACS, macs);
  }

  private static List<String> names(List<? extends Factory.Named<?>> factories) {
    return factories.stream().map(Factory.Named::getName).toList();
  }

  @Test
  void parsesJumpHostWithAndWithoutPort() {
    assertEquals(
        new SshSettings.JumpHost("bastion.example.com", 22),
        SshConnector.jumpHost("bastion.example.com"));
    assertEquals(
        new SshSettings.JumpHost("10.0.0.1", 2222), SshConnector.jumpHost("10.0.0.1:2222"));
    assertFailure(
        UpgradeFailures.INVALID_REQUEST, () -> SshConnector.jumpHost("bastion:http"));
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
