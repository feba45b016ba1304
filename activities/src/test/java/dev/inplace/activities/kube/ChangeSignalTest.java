package dev.inplace.activities.kube;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.HashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ChangeSignalTest {

  @Test
  void aChangeToTheWatchedNodeEndsTheWaitBeforeItsTime() throws Exception {
    KubernetesMockServer server = crudServer();
    try (KubernetesClient client = server.createClient()) {
      client.nodes().resource(KubeFixtures.node("w1", false, "v1.30.5+k3s1")).create();
      try (ChangeSignal signal =
          ChangeSignal.<Node>of("node w1", w -> client.nodes().withName("w1").watch(w))) {
        assertTrue(signal.await(30_000), "the watch's start wakes the wait once");
        while (signal.await(500)) {
          // a server may send the Node as it is when the watch starts: not the change awaited here
        }
        CompletableFuture<?> ready =
            CompletableFuture.runAsync(
                () ->
                    client.nodes().withName("w1").editStatus(n -> {
                      n.getStatus().getConditions().get(0).setStatus("True");
                      return n;
                    }),
                CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS));

        assertTrue(signal.await(30_000), "the change, not the 30 s, ended the wait");
        ready.get(5, TimeUnit.SECONDS);
      }
    } finally {
      server.destroy();
    }
  }

  @Test
  void onlyTheEventsASourceAcceptsEndTheWaitAndEachSourceCanEndIt() throws Exception {
    KubernetesMockServer server = crudServer();
    try (KubernetesClient client = server.createClient();
        ChangeSignal signal = new ChangeSignal()) {
      client.nodes().resource(KubeFixtures.node("w1", true, "v1.30.5+k3s1")).create();
      client.nodes().resource(KubeFixtures.node("w2", true, "v1.30.5+k3s1")).create();
      signal.<Node>watch("node w1", w -> client.nodes().withName("w1").watch(w),
          (action, node) -> action == Watcher.Action.DELETED);
      signal.<Node>watch("node w2", w -> client.nodes().withName("w2").watch(w), (action, node) -> true);
      assertTrue(signal.await(30_000), "the watches' start wakes the wait");
      while (signal.await(500)) {
        // both watches starting, and w2 as it is when its watch starts
      }

      touch(client, "w1");
      assertFalse(signal.await(1_000), "a change w1's source does not accept ended the wait");
      client.nodes().withName("w1").delete();
      assertTrue(signal.await(30_000), "w1's deletion ended the wait");
      while (signal.await(300)) {
        // nothing else is awaited from w1
      }
      touch(client, "w2");
      assertTrue(signal.await(30_000), "any change of w2 ends the wait");
    } finally {
      server.destroy();
    }
  }

  @Test
  void aRefusedWatchLeavesAPlainSleep() throws Exception {
    KubernetesMockServer server = new KubernetesMockServer(false); // expectations only, plain HTTP
    server.init();
    server
        .expect()
        .get()
        .withPath("/api/v1/nodes?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dw1&watch=true")
        .andReturn(
            403,
            new StatusBuilder()
                .withStatus("Failure")
                .withReason("Forbidden")
                .withCode(403)
                .withMessage("nodes \"w1\" is forbidden: cannot watch")
                .build())
        .always();
    try (KubernetesClient client = server.createClient();
        ChangeSignal signal =
            ChangeSignal.<Node>of("node w1", w -> client.nodes().withName("w1").watch(w))) {
      assertFalse(signal.await(300), "nothing woke the wait");
      assertTrue(watchWasAsked(server), "the watch was asked for (and refused)");
      assertFalse(signal.await(300), "still nothing: no watch");
    } finally {
      server.destroy();
    }
  }

  /** A mock API server in CRUD mode, over plain HTTP, with watches. */
  private static KubernetesMockServer crudServer() {
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
    server.init();
    return server;
  }

  /** Changes a Node without changing what a wait on it looks for (a label). */
  private static void touch(KubernetesClient client, String node) {
    client.nodes().withName(node).edit(n -> {
      n.getMetadata().getLabels().put("touched", "yes");
      return n;
    });
  }

  private static boolean watchWasAsked(KubernetesMockServer server) throws InterruptedException {
    RecordedRequest request;
    while ((request = server.takeRequest(1, TimeUnit.SECONDS)) != null) {
      if (request.getPath().contains("watch=true")) {
        return true;
      }
    }
    return false;
  }
}
