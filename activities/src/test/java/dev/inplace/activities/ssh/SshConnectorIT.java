package dev.inplace.activities.ssh;

import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static dev.inplace.activities.ssh.FailureAssertions.assertNoKeyMaterial;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SshConnectorIT {
  @TempDir Path work;
  private SimulatedNode node;

  @BeforeEach
  void startNode() throws IOException {
    node = new SimulatedNode(work);
  }

  @AfterEach
  void stopNode() throws IOException {
    node.close();
  }

  private static RemoteScript script(String text) {
    return new RemoteScript("probe", "preflight", text);
  }

  @Test
  void runsScriptOverPinnedConnectionWithHostRootAndCapturesOutput() {
    try (HostConnection conn = node.connector().open(node.access("root"))) {
      ScriptOutput out =
          conn.run(
              script("echo \"root=$INPLACE_HOST_ROOT\"\necho warn >&2\n"),
              UpgradeFailures.REMOTE_COMMAND_FAILED);
      assertEquals(node.root().toString(), out.value("root"));
      assertEquals("warn\n", out.stderr());
    }
    assertEquals(List.of("bash -s"), node.server().commands());
  }

  @Test
  void aNodesStepsShareOneConnectionAndADeadOneIsReplacedTransparently() throws Exception {
    SshConnector connector = node.connector();
    try (HostConnection first = connector.open(node.access("root"))) {
      first.run(script("echo one\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
      assertFalse(first.reused());
    }
    try (HostConnection second = connector.open(node.access("root"))) {
      assertTrue(second.reused());
      second.run(script("echo two\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
    }
    assertEquals(1, node.server().sessionsOpened());

    node.server().closeAllConnections(); // the host rebooted while the connection sat idle
    Thread.sleep(200);
    try (HostConnection third = connector.open(node.access("root"))) {
      ScriptOutput out = third.run(script("echo r=three\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
      assertEquals("three", out.value("r"));
    }
    assertEquals(2, node.server().sessionsOpened());
  }

  @Test
  void theUploadsOfOneStepShareOneSftpSessionAndTheNextStepOpensItsOwn() throws IOException {
    Path local = Files.write(work.resolve("artifact.bin"), new byte[256 * 1024]);
    SshConnector connector = node.connector();
    try (HostConnection conn = connector.open(node.access("root"))) {
      conn.upload(local, "/one.part", 0, sent -> { });
      conn.upload(local, "/two.part", 0, sent -> { });
    }
    assertEquals(1, node.server().sftpSessions());
    assertEquals(256 * 1024, Files.size(node.path("/one.part")));
    assertEquals(256 * 1024, Files.size(node.path("/two.part")));

    try (HostConnection next = connector.open(node.access("root"))) {
      assertTrue(next.reused());
      next.upload(local, "/three.part", 0, sent -> { });
    }
    assertEquals(2, node.server().sftpSessions());
    assertEquals(1, node.server().sessionsOpened());
  }

  @Test
  void anUploadLongerThanItsWritesInFlightArrivesByteForByteAndResumesAtItsOffset() throws IOException {
    // Several times the bytes an upload keeps in flight, so writes wait for acknowledgements.
    byte[] content = new byte[3 * HostConnection.BYTES_IN_FLIGHT + 12345];
    new java.util.Random(20261127L).nextBytes(content);
    Path local = Files.write(work.resolve("big.bin"), content);
    long offset = HostConnection.BYTES_IN_FLIGHT + 777;
    node.writeFile("/resumed.part", java.util.Arrays.copyOf(content, (int) offset));
    java.util.List<Long> progress = new java.util.ArrayList<>();
    try (HostConnection conn = node.connector().open(node.access("root"))) {
      assertEquals(content.length, conn.upload(local, "/whole.part", 0, progress::add));
      assertEquals(content.length - offset, conn.upload(local, "/resumed.part", offset, sent -> { }));
    }
    assertEquals(-1, Files.mismatch(local, node.path("/whole.part")));
    assertEquals(-1, Files.mismatch(local, node.path("/resumed.part")));
    assertEquals((long) content.length, progress.get(progress.size() - 1));
  }

  @Test
  void aRotatedSecretNeverReusesAConnectionOpenedUnderTheOldOne() {
    SshConnector connector = node.connector();
    try (HostConnection first = connector.open(node.access("root"))) {
      first.run(script("true\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
    }
    node.setSecrets(node.privateKeyText(), node.server().knownHostsLine() + "\n# rotated\n");
    try (HostConnection second = connector.open(node.access("root"))) {
      assertFalse(second.reused());
      second.run(script("true\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
    }
    assertEquals(2, node.server().sessionsOpened());
  }

  @Test
  void aConnectionThatBrokeMidStepIsNotKept() {
    SshConnector connector = node.connector();
    try (HostConnection conn = connector.open(node.access("root"))) {
      node.server().closeAllConnections();
      assertFailure(
          UpgradeFailures.HOST_UNREACHABLE,
          () -> conn.run(script("true\n"), UpgradeFailures.REMOTE_COMMAND_FAILED));
    }
    assertEquals(0, connector.idleConnections());
  }

  @Test
  void nonRootUserRunsScriptsUnderSudo() throws IOException {
    try (HostConnection conn = node.connector().open(node.access("deploy"))) {
      conn.run(script("echo ok\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
    }
    assertEquals(List.of("sudo -n bash -s"), node.server().commands());
    assertEquals("bash -s\n", Files.readString(node.path("/run/sudo.log")));
  }

  @Test
  void nonZeroExitFailsWithCallersTypeExitCodeAndLastStderrLines() {
    try (HostConnection conn = node.connector().open(node.access("root"))) {
      ApplicationFailure failure =
          assertFailure(
              UpgradeFailures.INSTALL_FAILED,
              () ->
                  conn.run(
                      script("echo first >&2\necho 'disk full' >&2\nexit 7\n"),
                      UpgradeFailures.INSTALL_FAILED));
      assertTrue(failure.isNonRetryable());
      String message = failure.getOriginalMessage();
      assertTrue(message.contains("preflight step 'probe'"), message);
      assertTrue(message.contains("exit code 7"), message);
      assertTrue(message.contains("disk full"), message);
    }
  }

  @Test
  void stdoutIsBoundedSoAChattyScriptCannotExhaustMemory() {
    try (HostConnection conn = node.connector().open(node.access("root"))) {
      ScriptOutput out =
          conn.run(
              script("head -c 300000 /dev/zero | tr '\\0' 'x'\n"),
              UpgradeFailures.REMOTE_COMMAND_FAILED);
      assertEquals(RemoteShell.OUTPUT_LIMIT, out.stdout().length());
    }
  }

  @Test
  void changedHostKeyIsRefusedBeforeAnythingRuns() {
    String otherKey = TestKeys.publicKeyEntry(TestKeys.generate().getPublic());
    node.setSecrets(
        node.privateKeyText(), "[127.0.0.1]:" + node.server().port() + " " + otherKey + "\n");

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.HOST_KEY_MISMATCH, () -> node.connector().open(node.access("root")));

    assertTrue(failure.isNonRetryable());
    String message = failure.getOriginalMessage();
    assertTrue(message.contains("127.0.0.1"), message);
    assertTrue(message.contains("does not match"), message);
    assertTrue(message.contains(TestKeys.fingerprint(node.server().hostKey())), message);
    assertTrue(node.server().commands().isEmpty());
    assertNoKeyMaterial(failure, node.privateKeyText());
  }

  @Test
  void hostMissingFromKnownHostsIsRefused() {
    String serverKey = TestKeys.publicKeyEntry(node.server().hostKey());
    node.setSecrets(node.privateKeyText(), "10.0.0.5 " + serverKey + "\n");

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.HOST_KEY_MISMATCH, () -> node.connector().open(node.access("root")));

    assertTrue(
        failure.getOriginalMessage().contains("no pinned host key"), failure.getOriginalMessage());
    assertTrue(node.server().commands().isEmpty());
  }

  @Test
  void unknownClientKeyFailsAuthenticationWithoutLeakingTheKey() {
    String wrongKey = TestKeys.openSshPrivateKey(TestKeys.generate());
    node.setSecrets(wrongKey, node.server().knownHostsLine() + "\n");

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.SSH_AUTH_FAILED, () -> node.connector().open(node.access("root")));

    assertTrue(failure.isNonRetryable());
    assertNoKeyMaterial(failure, wrongKey);
    assertTrue(node.server().commands().isEmpty());
  }

  @Test
  void unreadablePrivateKeyIsReportedWithoutQuotingIt() {
    String garbage =
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
            + "bm90IGEga2V5IGF0IGFsbCwganVzdCB0ZXh0\n"
            + "-----END OPENSSH PRIVATE KEY-----\n";
    node.setSecrets(garbage, node.server().knownHostsLine() + "\n");

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.SSH_AUTH_FAILED, () -> node.connector().open(node.access("root")));

    assertTrue(failure.getOriginalMessage().contains(SimulatedNode.KEY_SECRET));
    assertNoKeyMaterial(failure, garbage);
  }

  @Test
  void closedPortIsRetryableHostUnreachable() throws IOException {
    int freePort;
    try (ServerSocket socket = new ServerSocket(0)) {
      freePort = socket.getLocalPort();
    }
    HostAccess access =
        new HostAccess(
            SimulatedNode.NAMESPACE,
            "edge-1",
            "127.0.0.1",
            new SshSettings(
                "root",
                freePort,
                SimulatedNode.KEY_SECRET,
                SimulatedNode.KNOWN_HOSTS_SECRET,
                null));

    ApplicationFailure failure =
        assertFailure(UpgradeFailures.HOST_UNREACHABLE, () -> node.connector().open(access));

    assertFalse(failure.isNonRetryable());
    assertTrue(
        failure.getOriginalMessage().contains("127.0.0.1:" + freePort),
        failure.getOriginalMessage());
  }

  @Test
  void missingSecretPropagatesSecretNotFound() {
    HostAccess access =
        new HostAccess(
            SimulatedNode.NAMESPACE,
            "edge-1",
            "127.0.0.1",
            new SshSettings(
                "root",
                node.server().port(),
                "no-such-key",
                SimulatedNode.KNOWN_HOSTS_SECRET,
                null));

    assertFailure(UpgradeFailures.SECRET_NOT_FOUND, () -> node.connector().open(access));
  }

  @Test
  void connectsThroughJumpHostWithTheSamePinnedKeys() throws IOException {
    Path bastionRoot = Files.createDirectories(work.resolve("bastion-root"));
    try (TestSshServer bastion =
        TestSshServer.start(bastionRoot, work.resolve("fake-bin"), node.clientPublicKey())) {
      node.setSecrets(
          node.privateKeyText(),
          node.server().knownHostsLine() + "\n" + bastion.knownHostsLine() + "\n");
      HostAccess access =
          new HostAccess(
              SimulatedNode.NAMESPACE,
              "edge-1",
              "127.0.0.1",
              new SshSettings(
                  "root",
                  node.server().port(),
                  SimulatedNode.KEY_SECRET,
                  SimulatedNode.KNOWN_HOSTS_SECRET,
                  "127.0.0.1:" + bastion.port()));

      try (HostConnection conn = node.connector().open(access)) {
        ScriptOutput out = conn.run(script("echo r=ok\n"), UpgradeFailures.REMOTE_COMMAND_FAILED);
        assertEquals("ok", out.value("r"));
      }

      assertTrue(bastion.commands().isEmpty(), "nothing runs on the jump host");
      assertEquals(List.of("bash -s"), node.server().commands());
    }
  }

  @Test
  void jumpHostWithUnpinnedKeyIsRefused() throws IOException {
    Path bastionRoot = Files.createDirectories(work.resolve("bastion-root"));
    try (TestSshServer bastion =
        TestSshServer.start(bastionRoot, work.resolve("fake-bin"), node.clientPublicKey())) {
      HostAccess access =
          new HostAccess(
              SimulatedNode.NAMESPACE,
              "edge-1",
              "127.0.0.1",
              new SshSettings(
                  "root",
                  node.server().port(),
                  SimulatedNode.KEY_SECRET,
                  SimulatedNode.KNOWN_HOSTS_SECRET,
                  "127.0.0.1:" + bastion.port()));

      ApplicationFailure failure =
          assertFailure(UpgradeFailures.HOST_KEY_MISMATCH, () -> node.connector().open(access));

      assertTrue(failure.getOriginalMessage().contains("jump host"), failure.getOriginalMessage());
    }
  }
}
