package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class FrontendWaitTest {
  @Test
  void aFrontendThatIsNotThereYetIsWaitedForUntilAServerAnswersOnItsPort() throws Exception {
    int port = TlsFrontend.freePort();
    String address = "127.0.0.1:" + port;
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(address).build());
    AtomicReference<TestServer.PortBoundTestServer> server = new AtomicReference<>();
    try {
      // The server comes up 2 s after the wait began, on the port the stubs were built for.
      CompletableFuture<Void> later = CompletableFuture.runAsync(() -> {
        try {
          Thread.sleep(2_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        server.set(TestServer.createPortBoundServer(port, true));
      });
      long started = System.nanoTime();
      int absentCalls = FrontendWait.await(service, address);
      long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      later.get(10, TimeUnit.SECONDS);

      assertTrue(absentCalls >= 2, "calls that found no frontend: " + absentCalls);
      assertTrue(waitedMillis >= 1_500, "returned after " + waitedMillis + " ms, before the server was there");
      // The same stubs work now: the wait left them usable.
      service.blockingStub().withDeadlineAfter(5, TimeUnit.SECONDS).getSystemInfo(GetSystemInfoRequest.getDefaultInstance());
    } finally {
      service.shutdownNow();
      if (server.get() != null) {
        server.get().close();
      }
    }
  }

  @Test
  void aServerThatIsUpIsNotWaitedFor() throws Exception {
    int port = TlsFrontend.freePort();
    try (TestServer.PortBoundTestServer server = TestServer.createPortBoundServer(port, true)) {
      WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
          WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:" + port).build());
      try {
        assertEquals(0, FrontendWait.await(service, "127.0.0.1:" + port));
      } finally {
        service.shutdownNow();
      }
    }
  }

  @Test
  void onlyAnAbsentServerIsWaitedThroughNotARefusal() {
    assertTrue(FrontendWait.absent(new IllegalStateException("cannot register", Status.UNAVAILABLE.asRuntimeException())));
    assertTrue(FrontendWait.absent(Status.DEADLINE_EXCEEDED.asRuntimeException()));
    assertFalse(FrontendWait.absent(new IllegalStateException("cannot list", Status.PERMISSION_DENIED.asRuntimeException())));
    assertFalse(FrontendWait.absent(Status.UNAUTHENTICATED.asRuntimeException()));
    assertFalse(FrontendWait.absent(new IllegalStateException("namespace lacks search attributes")));
  }
}
