package dev.inplace.worker;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.client.FrontendWait;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK asks the frontend when a worker starts: with the frontend gone (a server crash between
 * the worker's wait for it and its start), the start fails with an answer {@link FrontendWait} waits
 * through, so {@code WorkerMain} waits and starts again rather than living on unready.
 */
class InplaceWorkerAbsentFrontendTest {
  @TempDir Path dir;

  @Test
  void startingWithTheFrontendGoneFailsWithAnAbsenceTheWorkerWaitsThrough() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:" + port).build());
    WorkflowClient client = WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
    try (KubernetesClient management = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build()).build()) {
      RuntimeException failed = assertThrows(RuntimeException.class, () -> InplaceWorker.start(
          client, "inplace-test", management, dir.resolve("cache"), ArtifactSourcePolicy.httpsOnly(),
          PollerOptions.defaults()));

      assertTrue(FrontendWait.absent(failed), "not an absence: " + failed);
    } finally {
      service.shutdownNow();
    }
  }
}
