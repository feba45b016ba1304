package dev.inplace.sandbox;

import com.uber.m3.tally.Scope;
import dev.inplace.client.TemporalConnection;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Temporal's test server started in this process (real time, no time skipping, in memory) for the
 * demo, the benchmarks and the end-to-end tests. The worker never starts one: it needs a frontend.
 */
public final class EmbeddedTemporal {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedTemporal.class);

  private EmbeddedTemporal() {}

  /** Starts the server and returns a connection on namespace {@code default} with inplace's search attributes. */
  public static TemporalConnection start() {
    return start(null);
  }

  /** As above, reporting the SDK's metrics to {@code metrics} when not null (the worker's /metrics). */
  public static TemporalConnection start(Scope metrics) {
    // lockTimeSkipping=true: timers run in real time, as on a real server.
    TestServer.InProcessTestServer server = TestServer.createServer(true);
    TestServerLockLog.install(server);
    WorkflowServiceStubsOptions.Builder options =
        WorkflowServiceStubsOptions.newBuilder().setChannel(server.getChannel());
    if (metrics != null) {
      options.setMetricsScope(metrics);
    }
    WorkflowServiceStubs stubs = WorkflowServiceStubs.newServiceStubs(options.build());
    log.info("started embedded Temporal test server (in-process, in-memory)");
    return TemporalConnection.over(stubs, "default", server).withSearchAttributes();
  }
}
