package dev.inplace.worker.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.testing.Fixtures;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/** The worker's own logback.xml, as shipped, with INPLACE_LOG_FORMAT=json. */
class JsonLogsTest {

  private static String logThroughShippedConfig(String format, Runnable log) throws Exception {
    URL config = JsonLogsTest.class.getClassLoader().getResource("logback.xml");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
    try {
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      context.putProperty("INPLACE_LOG_FORMAT", format);
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      configurator.doConfigure(config);
      Logger logger = context.getLogger("dev.inplace.activities.host.HostActivitiesImpl");
      CURRENT.set(logger);
      MDC_OF.set(context.getMDCAdapter());
      log.run();
      if (captured.size() == 0) {
        ByteArrayOutputStream status = new ByteArrayOutputStream();
        ch.qos.logback.core.util.StatusPrinter2 printer = new ch.qos.logback.core.util.StatusPrinter2();
        printer.setPrintStream(new PrintStream(status, true, StandardCharsets.UTF_8));
        printer.print(context);
        return "(nothing logged) " + status.toString(StandardCharsets.UTF_8);
      }
    } finally {
      context.stop();
      System.setErr(err);
      CURRENT.remove();
      MDC_OF.remove();
    }
    return captured.toString(StandardCharsets.UTF_8);
  }

  private static final ThreadLocal<Logger> CURRENT = new ThreadLocal<>();
  /** The test context's own MDC (a second LoggerContext does not share the global one). */
  private static final ThreadLocal<org.slf4j.spi.MDCAdapter> MDC_OF = new ThreadLocal<>();

  private static void mdc(String key, String value) {
    MDC_OF.get().put(key, value);
  }

  @Test
  void aJsonLineCarriesWorkflowRunClusterNodeAndStep() throws Exception {
    String out = logThroughShippedConfig("json", () -> {
      // As the SDK (WorkflowId, RunId), HostActivitiesImpl (cluster, node) and LogContextInterceptor (step) set them.
      mdc("WorkflowId", "node-upgrade/fleet/edge-1-worker-1/v1.31.2+k3s1");
      mdc("RunId", "8c1f-run");
      mdc("cluster", Fixtures.request("worker-1", NodeRole.WORKER).hostAccess().clusterForLogs());
      mdc("node", "worker-1");
      mdc("step", LogContextInterceptor.stepOf("DrainNode"));
      try {
        CURRENT.get().info("evicted {} pods", 3);
      } finally {
        MDC_OF.get().clear();
      }
    });

    String line = out.strip();
    assertEquals(1, line.lines().count(), out);
    JsonNode json = new ObjectMapper().readTree(line);
    assertEquals("node-upgrade/fleet/edge-1-worker-1/v1.31.2+k3s1", json.get("workflowId").asText());
    assertEquals("8c1f-run", json.get("runId").asText());
    assertEquals("fleet/edge-1", json.get("cluster").asText());
    assertEquals("worker-1", json.get("node").asText());
    assertEquals("drain", json.get("step").asText());
    assertEquals("evicted 3 pods", json.get("message").asText());
    assertEquals("INFO", json.get("level").asText());
    assertTrue(json.has("@timestamp"), line);
  }

  @Test
  void theDefaultIsOneLineOfTextWithTheSameContext() throws Exception {
    String out = logThroughShippedConfig("text", () -> {
      mdc("cluster", "fleet/edge-1");
      mdc("step", "install");
      try {
        CURRENT.get().info("installed");
      } finally {
        MDC_OF.get().clear();
      }
    });
    assertTrue(out.contains("cluster=fleet/edge-1") && out.contains("step=install") && out.contains("installed"), out);
    assertTrue(!out.strip().startsWith("{"), out);
  }

  @Test
  void activitiesMapToTheirStepAndUnknownOnesKeepTheirType() {
    assertEquals("stage", LogContextInterceptor.stepOf("StageArtifacts"));
    assertEquals("verify", LogContextInterceptor.stepOf("AwaitNodeVersion"));
    assertEquals("DescribeCluster", LogContextInterceptor.stepOf("DescribeCluster"));
  }
}
