package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Rewriting a known_hosts text replaces the scanned hosts' lines and keeps everything else. */
class KnownHostsTextTest {
  @Test
  void port22IsWrittenBareAndAnyOtherPortInBrackets() {
    assertEquals("10.0.0.1", KnownHostsText.hostPattern("10.0.0.1", 22));
    assertEquals("[10.0.0.1]:2222", KnownHostsText.hostPattern("10.0.0.1", 2222));
  }

  @Test
  void theScannedHostsLinesAreReplacedWhileCommentsOtherHostsAndHashedNamesStay() {
    String existing = String.join("\n",
        "# fleet/edge-1",
        "bastion.example ssh-ed25519 AAAAbastion",
        "[10.0.0.1]:2222 ssh-ed25519 AAAAold",
        "[10.0.0.1]:2222,cp-1 ssh-rsa AAAAoldrsa",
        "|1|abc=|def= ssh-ed25519 AAAAhashed",
        "10.0.0.1 ssh-ed25519 AAAAport22");
    String merged = KnownHostsText.merge(existing, Set.of("[10.0.0.1]:2222"), List.of("[10.0.0.1]:2222 ssh-ed25519 AAAAnew"));
    assertEquals(String.join("\n",
        "# fleet/edge-1",
        "bastion.example ssh-ed25519 AAAAbastion",
        "cp-1 ssh-rsa AAAAoldrsa",
        "|1|abc=|def= ssh-ed25519 AAAAhashed",
        "10.0.0.1 ssh-ed25519 AAAAport22",
        "[10.0.0.1]:2222 ssh-ed25519 AAAAnew") + "\n", merged);
  }

  @Test
  void aMissingSecretTextGivesJustTheNewLines() {
    assertEquals("a ssh-ed25519 AAAA\n", KnownHostsText.merge("", Set.of("a"), List.of("a ssh-ed25519 AAAA")));
    assertEquals("a ssh-ed25519 AAAA\n", KnownHostsText.merge(null, Set.of("a"), List.of("a ssh-ed25519 AAAA")));
  }
}
