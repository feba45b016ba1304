package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import com.google.protobuf.ByteString;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodeUpgradeWorkflowImpl;
import dev.inplace.workflows.testing.Fixtures;
import io.temporal.api.common.v1.Payload;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.payload.codec.PayloadCodecException;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PayloadEncryptionTest {
  private static final String NODE_IP = "10.77.31.9";
  private static final String ARTIFACT_URL = "https://mirror.example.internal/k3s/v1.31.2-k3s1/k3s";
  private static final String SCRIPT_OUTPUT = "stage.sh: cannot write /var/lib/inplace/staging: No space left (7f3a)";

  private static String key(int fill) {
    byte[] bytes = new byte[32];
    java.util.Arrays.fill(bytes, (byte) fill);
    return Base64.getEncoder().encodeToString(bytes);
  }

  @Test
  void withTheCodecOnRawHistoryHoldsNoNodeIpArtifactUrlOrScriptOutput() throws Exception {
    String encrypted = rawHistory(PayloadEncryption.encrypting(PayloadKeys.parse("k1:" + key(1), "test")));
    for (String secret : List.of(NODE_IP, ARTIFACT_URL, "mirror.example.internal", SCRIPT_OUTPUT, "No space left")) {
      assertTrue(!encrypted.contains(secret), "in clear in the history: " + secret);
    }
    assertTrue(encrypted.contains(AesGcmPayloadCodec.ENCODING), "payloads are marked encrypted");

    // The same run without the codec: the test would see them, so it can fail.
    String clear = rawHistory(DefaultDataConverter.STANDARD_INSTANCE);
    for (String secret : List.of(NODE_IP, ARTIFACT_URL, "No space left")) {
      assertTrue(clear.contains(secret), "control run should hold " + secret);
    }
  }

  /** Runs a NodeUpgrade whose staging fails with script output; the history's bytes as Latin-1 text. */
  private static String rawHistory(DataConverter converter) {
    TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance(TestEnvironmentOptions.newBuilder()
        .setWorkflowClientOptions(WorkflowClientOptions.newBuilder().setDataConverter(converter).build())
        .build());
    try {
      env.registerSearchAttribute("InplaceCluster", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      env.registerSearchAttribute("InplaceKind", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      env.registerSearchAttribute("InplaceTargetVersion", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      env.registerSearchAttribute("InplaceNode", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST);
      env.registerSearchAttribute("InplacePhase", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      Worker worker = env.newWorker("q");
      worker.registerWorkflowImplementationTypes(NodeUpgradeWorkflowImpl.class);
      HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
      NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
      ClusterApiActivities capi = mock(ClusterApiActivities.class, withSettings().withoutAnnotations());
      when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("cp-1", Fixtures.FROM));
      when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
      when(hosts.stageArtifacts(any()))
          .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.REMOTE_COMMAND_FAILED, SCRIPT_OUTPUT));
      worker.registerActivitiesImplementations(hosts, nodes, capi);
      env.start();
      NodeUpgradeRequest base = Fixtures.request("cp-1", NodeRole.CONTROL_PLANE);
      Artifact k3s = Fixtures.k3sBinary();
      NodeUpgradeRequest request = new NodeUpgradeRequest(
          new dev.inplace.workflows.api.NodeTarget(base.node().cluster(), base.node().machineName(), "cp-1",
              NodeRole.CONTROL_PLANE, NODE_IP),
          base.distribution(), base.targetVersion(),
          List.of(new Artifact(k3s.name(), ArtifactKind.BINARY, ARTIFACT_URL, k3s.sha256(), k3s.sizeBytes(),
              k3s.installPath(), k3s.mode()), Fixtures.images()),
          base.profile(), base.ssh(), base.drain(), base.readyTimeoutSeconds(), base.minFreeBytes(), base.arch());
      NodeUpgradeWorkflow workflow = env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
          WorkflowOptions.newBuilder().setWorkflowId("node-upgrade/fleet/cp-1").setTaskQueue("q").build());
      assertThrows(WorkflowFailedException.class, () -> workflow.upgrade(request));
      byte[] raw = env.getWorkflowClient().fetchHistory("node-upgrade/fleet/cp-1").getHistory().toByteArray();
      return new String(raw, StandardCharsets.ISO_8859_1);
    } finally {
      env.close();
    }
  }

  @Test
  void oldKeysStillDecryptAfterARotationAndAMissingKeyIsNamed() {
    Payload clear = DefaultDataConverter.STANDARD_INSTANCE.toPayload(Map.of("address", NODE_IP)).orElseThrow();
    AesGcmPayloadCodec before = new AesGcmPayloadCodec(PayloadKeys.parse("k1:" + key(1), "test"));
    Payload sealed = before.encode(List.of(clear)).get(0);
    assertEquals("k1", sealed.getMetadataOrThrow(AesGcmPayloadCodec.KEY_ID).toStringUtf8());
    assertTrue(!sealed.getData().toStringUtf8().contains(NODE_IP));

    AesGcmPayloadCodec rotated = new AesGcmPayloadCodec(PayloadKeys.parse("k2:" + key(2) + "\nk1:" + key(1), "test"));
    assertEquals(clear, rotated.decode(List.of(sealed)).get(0));
    assertEquals("k2", rotated.encode(List.of(clear)).get(0).getMetadataOrThrow(AesGcmPayloadCodec.KEY_ID).toStringUtf8());

    AesGcmPayloadCodec dropped = new AesGcmPayloadCodec(PayloadKeys.parse("k2:" + key(2), "test"));
    PayloadCodecException missing = assertThrows(PayloadCodecException.class, () -> dropped.decode(List.of(sealed)));
    assertTrue(missing.getMessage().contains("key k1, which is not in the payload key file"), missing.getMessage());

    // Unencrypted payloads are refused, unless the operator lets older ones through while they drain.
    PayloadCodecException plaintext = assertThrows(PayloadCodecException.class, () -> rotated.decode(List.of(clear)));
    assertTrue(plaintext.getMessage().contains("not encrypted was refused"), plaintext.getMessage());
    AesGcmPayloadCodec draining = new AesGcmPayloadCodec(PayloadKeys.parse("k2:" + key(2) + "\nk1:" + key(1), "test"), true);
    assertEquals(clear, draining.decode(List.of(clear)).get(0));
  }

  @Test
  void theMigrationSwitchIsTrueOrFalseOnly() {
    IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class, () -> PayloadEncryption.fromEnvironment(
        Map.of(PayloadEncryption.ACCEPT_PLAINTEXT, "yes")));
    assertTrue(wrong.getMessage().contains(PayloadEncryption.ACCEPT_PLAINTEXT), wrong.getMessage());
  }

  @Test
  void aTamperedPayloadOrAWrongKeyUnderTheSameIdIsRefused() {
    Payload clear = DefaultDataConverter.STANDARD_INSTANCE.toPayload("x").orElseThrow();
    Payload sealed = new AesGcmPayloadCodec(PayloadKeys.parse("k1:" + key(1), "test")).encode(List.of(clear)).get(0);
    byte[] data = sealed.getData().toByteArray();
    data[data.length - 1] ^= 1;
    Payload tampered = sealed.toBuilder().setData(ByteString.copyFrom(data)).build();
    AesGcmPayloadCodec codec = new AesGcmPayloadCodec(PayloadKeys.parse("k1:" + key(1), "test"));
    assertThrows(PayloadCodecException.class, () -> codec.decode(List.of(tampered)));
    AesGcmPayloadCodec other = new AesGcmPayloadCodec(PayloadKeys.parse("k1:" + key(3), "test"));
    assertThrows(PayloadCodecException.class, () -> other.decode(List.of(sealed)));
  }

  @Test
  void theKeyFileIsCheckedWithoutEchoingKeys(@TempDir Path dir) throws Exception {
    String shortKey = Base64.getEncoder().encodeToString(new byte[16]);
    IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class,
        () -> PayloadKeys.parse("k1:" + shortKey, "keys"));
    assertTrue(tooShort.getMessage().contains("has 16 bytes; AES-256 needs 32"));
    assertTrue(!tooShort.getMessage().contains(shortKey));
    assertThrows(IllegalArgumentException.class, () -> PayloadKeys.parse("# only a comment\n", "keys"));
    assertThrows(IllegalArgumentException.class, () -> PayloadKeys.parse("k1:" + key(1) + "\nk1:" + key(2), "keys"));
    assertThrows(IllegalArgumentException.class, () -> PayloadKeys.parse("bad id:" + key(1), "keys"));
    Path file = Files.writeString(dir.resolve("keys"), "# rotated 2026-11\nk2:" + key(2) + "\nk1:" + key(1) + "\n");
    assertEquals("k2", PayloadKeys.read(file).currentId());
    assertTrue(PayloadEncryption.fromEnvironment(Map.of(PayloadEncryption.KEY_FILE, file.toString()))
        instanceof io.temporal.common.converter.CodecDataConverter);
    assertTrue(!(PayloadEncryption.fromEnvironment(Map.of()) instanceof io.temporal.common.converter.CodecDataConverter),
        "no key file: payloads in clear");
  }
}
