package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The two trust sources decide per host: only confirmed keys pass, a contradiction refuses the host. */
class HostKeyTrustTest {
  private static final ClusterHosts.Host CP = new ClusterHosts.Host("edge-1-cp-abc", "cp-1", "10.0.0.10");
  private static final HostKey ED = key("ssh-ed25519", 1);
  private static final HostKey ECDSA = key("ecdsa-sha2-nistp256", 2);
  private static final HostKey OTHER_ED = key("ssh-ed25519", 3);

  private static HostKey key(String type, int seed) {
    byte[] blob = new byte[51];
    java.util.Arrays.fill(blob, (byte) seed);
    return new HostKey(type, Base64.getEncoder().encodeToString(blob));
  }

  @Test
  void fingerprintIsSha256OfTheKeyBlobAsSshKeygenPrintsIt() throws Exception {
    byte[] blob = Base64.getDecoder().decode(ED.base64());
    String expected = "SHA256:" + Base64.getEncoder().withoutPadding()
        .encodeToString(java.security.MessageDigest.getInstance("SHA-256").digest(blob));
    assertEquals(expected, ED.fingerprint());
    assertEquals(50, ED.fingerprint().length());
  }

  @Test
  void anExpectedFingerprintNamedByMachineNodeOrAddressTrustsOnlyThatKey() {
    for (String name : List.of("edge-1-cp-abc", "cp-1", "10.0.0.10")) {
      ExpectedFingerprints expected = ExpectedFingerprints.parse(List.of(name + "=" + ED.fingerprint()), null);
      HostKeyTrust.Decision decision = expected.decide(CP, List.of(ED, ECDSA));
      assertFalse(decision.refused(), name);
      assertEquals(List.of(ED), decision.trusted(), name);
    }
  }

  @Test
  void anExpectedFingerprintTheHostDoesNotShowRefusesTheHostAsAMismatch() {
    ExpectedFingerprints expected = ExpectedFingerprints.parse(List.of("cp-1=" + OTHER_ED.fingerprint()), null);
    HostKeyTrust.Decision decision = expected.decide(CP, List.of(ED, ECDSA));
    assertTrue(decision.refused());
    assertTrue(decision.refusal().startsWith("MISMATCH: expected " + OTHER_ED.fingerprint()), decision.refusal());
    assertTrue(decision.refusal().contains(ED.fingerprint()), decision.refusal());
    assertEquals(List.of(), decision.trusted());
  }

  @Test
  void aHostWithoutAnExpectedFingerprintIsRefusedNotTrustedOnFirstUse() {
    ExpectedFingerprints expected = ExpectedFingerprints.parse(List.of("worker-1=" + ED.fingerprint()), null);
    HostKeyTrust.Decision decision = expected.decide(CP, List.of(ED));
    assertTrue(decision.refused());
    assertTrue(decision.refusal().startsWith("no fingerprint given for it"), decision.refusal());
    assertEquals(List.of("worker-1"), expected.unmatchedNames(List.of(CP)));
  }

  @Test
  void expectEntriesThatAreNotHostEqualsSha256AreUsageErrorsNamingTheEntry(@TempDir Path dir) throws Exception {
    for (String bad : List.of("cp-1", "cp-1=MD5:aa", "cp-1=SHA256:short", "=" + ED.fingerprint(), "cp 1=" + ED.fingerprint())) {
      CliException e = assertThrows(CliException.class, () -> ExpectedFingerprints.parse(List.of(bad), null), bad);
      assertTrue(e.getMessage().startsWith("--expect " + bad + ": expected HOST=SHA256:"), e.getMessage());
    }
    Path file = Files.writeString(dir.resolve("expect"), "# checked on the consoles\ncp-1 " + ED.fingerprint() + "\n\nworker-1=nope\n");
    CliException e = assertThrows(CliException.class, () -> ExpectedFingerprints.parse(List.of(), file));
    assertTrue(e.getMessage().startsWith(file + " line 4: "), e.getMessage());
  }

  @Test
  void anExpectFileReadsCommentsBlankLinesAndBothSeparators(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("expect"), "# consoles\ncp-1 " + ED.fingerprint() + "\n\n10.0.0.10=" + ECDSA.fingerprint() + "\n");
    HostKeyTrust.Decision decision = ExpectedFingerprints.parse(List.of(), file).decide(CP, List.of(ED, ECDSA, key("ssh-rsa", 4)));
    assertEquals(List.of(ED, ECDSA), decision.trusted());
  }

  @Test
  void aPublishedKeyTheHostShowsIsTrustedAndOnlyThePublishedKeysArePinned() {
    NodePublishedKeys published = new NodePublishedKeys(Map.of("cp-1", Optional.of(ED.publicKeyText() + "\n")));
    HostKeyTrust.Decision decision = published.decide(CP, List.of(ED, ECDSA));
    assertEquals(List.of(ED), decision.trusted());
  }

  @Test
  void aShownKeyThatContradictsThePublishedKeyOfItsTypeRefusesTheHost() {
    NodePublishedKeys published = new NodePublishedKeys(Map.of("cp-1",
        Optional.of(OTHER_ED.publicKeyText() + "\n" + ECDSA.publicKeyText())));
    HostKeyTrust.Decision decision = published.decide(CP, List.of(ED, ECDSA));
    assertTrue(decision.refused());
    assertTrue(decision.refusal().startsWith("MISMATCH: it shows ssh-ed25519 " + ED.fingerprint()), decision.refusal());
  }

  @Test
  void aNodeThatPublishedNothingOrIsMissingIsRefusedWithWhatToDo() {
    NodePublishedKeys published = new NodePublishedKeys(Map.of("cp-1", Optional.empty()));
    assertTrue(published.decide(CP, List.of(ED)).refusal().contains("add the bootstrap snippet"));
    NodePublishedKeys none = new NodePublishedKeys(Map.of());
    assertEquals("Node cp-1 not found in the workload cluster", none.decide(CP, List.of(ED)).refusal());
    NodePublishedKeys garbage = new NodePublishedKeys(Map.of("cp-1", Optional.of("not a key")));
    assertTrue(garbage.decide(CP, List.of(ED)).refused());
  }
}
