package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A status write that meets a conflict (409) reads the object again and writes on top of what it finds;
 * one that starts from an object the reconcile just read asks the server nothing before its write.
 */
@EnableKubernetesMockClient(https = false)
class StatusWriterTest {
  private static final String PATH = "/apis/upgrade.inplace.dev/v1alpha1/namespaces/fleet/controlplaneupgrades/cr";

  KubernetesMockServer server;
  KubernetesClient client;

  private static ControlPlaneUpgrade stored(String resourceVersion, String message) {
    ControlPlaneUpgrade cr = TestEstate.controlPlaneUpgrade("cr", new ControlPlaneUpgradeSpec());
    cr.getMetadata().setUid("uid-1");
    cr.getMetadata().setResourceVersion(resourceVersion);
    cr.setStatus(new UpgradeStatus().setMessage(message));
    return cr;
  }

  @Test
  void aConflictIsAnsweredByReadingAgainAndWritingOnTheNewVersion() throws Exception {
    Status conflict = new StatusBuilder().withCode(409).withReason("Conflict").withMessage("the object has been modified").build();
    server.expect().put().withPath(PATH + "/status").andReturn(409, conflict).once();
    server.expect().get().withPath(PATH).andReturn(200, stored("2", "written by someone else")).once();
    server.expect().put().withPath(PATH + "/status").andReturn(200, stored("3", "mine")).once();

    StatusWriter.Written written =
        new StatusWriter(client).writeStatusFrom(stored("1", "before"), previous -> {
          previous.setPhase(UpgradePhase.RUNNING);
          return previous;
        });

    assertTrue(written.changed());
    assertEquals("written by someone else", written.before().getMessage(), "the next status builds on the latest one");
    assertEquals(3, server.getRequestCount());
    server.takeRequest(); // PUT, refused
    server.takeRequest(); // GET
    RecordedRequest retry = server.takeRequest();
    assertEquals("PUT", retry.getMethod());
    String body = retry.getBody().readUtf8();
    assertTrue(body.contains("\"resourceVersion\":\"2\""), body);
    assertTrue(body.contains("\"phase\":\"Running\""), body);
  }

  @Test
  void aWriteFromAnObjectJustReadAsksNoSecondGetAndAConflictStillReadsAgain() throws Exception {
    Status conflict = new StatusBuilder().withCode(409).withReason("Conflict").withMessage("the object has been modified").build();
    server.expect().put().withPath(PATH + "/status").andReturn(200, stored("2", "mine")).once();
    server.expect().put().withPath(PATH + "/status").andReturn(409, conflict).once();
    server.expect().get().withPath(PATH).andReturn(200, stored("3", "written by someone else")).once();
    server.expect().put().withPath(PATH + "/status").andReturn(200, stored("4", "mine")).once();
    StatusWriter writer = new StatusWriter(client);
    ControlPlaneUpgrade justRead = stored("1", "before");

    StatusWriter.Written first = writer.writeStatusFrom(justRead, previous -> previous.setPhase(UpgradePhase.RUNNING));

    assertTrue(first.changed());
    assertEquals(1, server.getRequestCount(), "one PUT, no GET");
    RecordedRequest put = server.takeRequest();
    assertEquals("PUT", put.getMethod());
    assertTrue(put.getBody().readUtf8().contains("\"resourceVersion\":\"1\""));
    assertEquals(null, justRead.getStatus().getPhase(), "the caller's object is left as it was read");

    StatusWriter.Written second = writer.writeStatusFrom(stored("1", "before"), previous -> previous.setPhase(UpgradePhase.RUNNING));

    assertTrue(second.changed());
    assertEquals("written by someone else", second.before().getMessage(), "after the conflict, built on the latest");
    assertEquals(List.of("PUT", "GET", "PUT"),
        List.of(server.takeRequest().getMethod(), server.takeRequest().getMethod(), server.takeRequest().getMethod()));
  }

  @Test
  void everyStringOfAStatusIsStoredRedactedAndTheSameStatusIsNotWrittenAgain() throws Exception {
    String said = "kubeadm join failed on cp-1: token: abcdef.0123456789abcdef, -----BEGIN PRIVATE KEY-----\nMIIEvQ\n"
        + "-----END PRIVATE KEY-----";
    String redacted = "kubeadm join failed on cp-1: token: <redacted>, -----BEGIN PRIVATE KEY-----<redacted>"
        + "-----END PRIVATE KEY-----";
    server.expect().put().withPath(PATH + "/status").andReturn(200, stored("2", redacted)).once();
    StatusWriter writer = new StatusWriter(client);
    java.util.function.UnaryOperator<UpgradeStatus> failed = previous -> {
      previous.setPhase(UpgradePhase.FAILED).setMessage(said);
      Conditions.set(previous, null, dev.inplace.worker.crd.UpgradeCondition.FAILED, true, "KubeadmUpgradeFailed",
          "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln", 1, "2026-11-28T14:00:00Z");
      return previous;
    };

    StatusWriter.Written first = writer.writeStatusFrom(stored("1", "before"), failed);

    assertTrue(first.changed());
    assertEquals(redacted, first.after().getMessage());
    String body = server.takeRequest().getBody().readUtf8();
    for (String secret : List.of("abcdef.0123456789abcdef", "MIIEvQ", "eyJhbGciOiJSUzI1NiJ9")) {
      assertTrue(!body.contains(secret), secret + " written: " + body);
    }
    assertTrue(body.contains("kubeadm join failed on cp-1: token: <redacted>"), body);
    assertTrue(body.contains("Authorization: Bearer <redacted>"), body);

    ControlPlaneUpgrade stored = stored("2", null);
    stored.setStatus(first.after());
    StatusWriter.Written again = writer.writeStatusFrom(stored, failed);

    assertTrue(!again.changed(), "the redacted status is what is stored: nothing to write");
    assertEquals(1, server.getRequestCount());
  }
}
