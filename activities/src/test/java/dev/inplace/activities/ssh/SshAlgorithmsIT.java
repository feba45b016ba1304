package dev.inplace.activities.ssh;

import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.util.List;
import java.util.function.Consumer;
import org.apache.sshd.common.NamedFactory;
import org.apache.sshd.common.cipher.BuiltinCiphers;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.kex.BuiltinDHFactories;
import org.apache.sshd.common.mac.BuiltinMacs;
import org.apache.sshd.common.signature.BuiltinSignatures;
import org.apache.sshd.server.ServerBuilder;
import org.apache.sshd.server.SshServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The client speaks every modern algorithm it lists and refuses servers that offer only old ones. */
class SshAlgorithmsIT {
  /** The server also verifies the client's (ECDSA) key with its signature list. */
  private static final BuiltinSignatures CLIENT_KEY_SIGNATURE = BuiltinSignatures.nistp256;

  @TempDir Path work;

  @ParameterizedTest
  @EnumSource(
      value = BuiltinCiphers.class,
      names = {"aes128gcm", "aes256gcm", "cc20p1305_openssh", "aes128ctr", "aes192ctr", "aes256ctr"})
  void connectsWithEachModernCipher(BuiltinCiphers cipher) throws IOException {
    assertConnects(TestKeys.generate(), s -> s.setCipherFactories(List.of(cipher)));
  }

  @ParameterizedTest
  @EnumSource(
      value = BuiltinDHFactories.class,
      names = {"curve25519", "curve25519_libssh", "ecdhp256", "ecdhp384", "ecdhp521"})
  void connectsWithEachModernKeyExchange(BuiltinDHFactories kex) throws IOException {
    assertConnects(TestKeys.generate(), s -> s.setKeyExchangeFactories(kexes(kex)));
  }

  @Test
  void connectsWithEtmMacsOverAesCtr() throws IOException {
    for (BuiltinMacs mac : List.of(BuiltinMacs.hmacsha256etm, BuiltinMacs.hmacsha512etm)) {
      assertConnects(
          TestKeys.generate(),
          s -> {
            s.setCipherFactories(List.of(BuiltinCiphers.aes256ctr));
            s.setMacFactories(List.of(mac));
          });
    }
  }

  @Test
  void pinsEd25519AndRsaSha2HostKeys() throws IOException {
    assertConnects(generate("ssh-ed25519", 256), s -> {});
    assertConnects(
        generate("ssh-rsa", 3072),
        s -> s.setSignatureFactories(List.of(BuiltinSignatures.rsaSHA512, CLIENT_KEY_SIGNATURE)));
    assertConnects(
        generate("ssh-rsa", 3072),
        s -> s.setSignatureFactories(List.of(BuiltinSignatures.rsaSHA256, CLIENT_KEY_SIGNATURE)));
  }

  @Test
  void serverWithOnlySha1KeyExchangeIsRefusedNamingKeyExchange() throws IOException {
    ApplicationFailure failure =
        assertRefused(
            TestKeys.generate(),
            s -> s.setKeyExchangeFactories(kexes(BuiltinDHFactories.dhg14, BuiltinDHFactories.dhg1)));
    assertMentions(failure, "key exchange", "diffie-hellman-group14-sha1", "curve25519-sha256");
  }

  @Test
  void serverWithOnlyLegacyCiphersIsRefusedNamingCiphers() throws IOException {
    ApplicationFailure failure =
        assertRefused(
            TestKeys.generate(),
            s ->
                s.setCipherFactories(
                    List.of(BuiltinCiphers.tripledescbc, BuiltinCiphers.aes128cbc)));
    assertMentions(failure, "cipher", "3des-cbc", "aes128-gcm@openssh.com");
  }

  @Test
  void serverWithOnlyLegacyMacsIsRefusedNamingMacs() throws IOException {
    ApplicationFailure failure =
        assertRefused(
            TestKeys.generate(),
            s -> {
              s.setCipherFactories(List.of(BuiltinCiphers.aes128ctr));
              s.setMacFactories(List.of(BuiltinMacs.hmacmd5, BuiltinMacs.hmacsha1));
            });
    assertMentions(failure, "MAC", "hmac-md5", "hmac-sha2-256-etm@openssh.com");
  }

  @Test
  void serverWithOnlySha1RsaHostKeySignaturesIsRefused() throws IOException {
    ApplicationFailure failure =
        assertRefused(
            generate("ssh-rsa", 3072),
            s -> s.setSignatureFactories(List.of(BuiltinSignatures.rsa, CLIENT_KEY_SIGNATURE)));
    assertMentions(failure, "host key", "ssh-rsa", "ssh-ed25519");
  }

  private void assertConnects(KeyPair hostKey, Consumer<SshServer> tune) throws IOException {
    Path dir = java.nio.file.Files.createTempDirectory(work, "node");
    try (SimulatedNode node = new SimulatedNode(dir, hostKey, tune);
        HostConnection conn = node.connector().open(node.access("root"))) {
      ScriptOutput out =
          conn.run(
              new RemoteScript("probe", "preflight", "echo r=ok\n"),
              UpgradeFailures.REMOTE_COMMAND_FAILED);
      assertEquals("ok", out.value("r"));
    }
  }

  private ApplicationFailure assertRefused(KeyPair hostKey, Consumer<SshServer> tune)
      throws IOException {
    Path dir = java.nio.file.Files.createTempDirectory(work, "node");
    try (SimulatedNode node = new SimulatedNode(dir, hostKey, tune)) {
      ApplicationFailure failure =
          assertFailure(
              UpgradeFailures.SSH_ALGORITHMS_UNSUPPORTED,
              () -> node.connector().open(node.access("root")));
      assertTrue(failure.isNonRetryable());
      assertTrue(node.server().commands().isEmpty());
      return failure;
    }
  }

  private static void assertMentions(ApplicationFailure failure, String... parts) {
    String message = failure.getOriginalMessage();
    for (String part : parts) {
      assertTrue(message.contains(part), "'" + part + "' missing from: " + message);
    }
  }

  private static List<org.apache.sshd.common.kex.KeyExchangeFactory> kexes(
      BuiltinDHFactories... factories) {
    return NamedFactory.setUpTransformedFactories(false, List.of(factories), ServerBuilder.DH2KEX);
  }

  private static KeyPair generate(String type, int bits) {
    try {
      return KeyUtils.generateKeyPair(type, bits);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
