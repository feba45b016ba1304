package dev.inplace.sandbox.redaction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import dev.inplace.client.TemporalConnection;
import dev.inplace.starter.CliDoor;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.watch.StatusDoor;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityOptions;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import io.temporal.worker.WorkerFactory;
import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.io.ByteArrayOutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One message that carries every credential form the redactor knows (YAML and JSON keys, a
 * kubeconfig's client key, a PEM private key and a base64-encoded one, Bearer and Basic
 * Authorization headers, a flag, an environment assignment, a URL's password) is fed, as it is, into
 * every output path: the worker's log lines in both formats (its own logback.xml), a custom
 * resource's status, conditions and Events (the watcher's writers against the mock API server), a
 * run's history (an activity's failure and the workflow's, through the data converter every process
 * uses, on a Temporal test server) and the CLI's output (the real {@code inplace} command against
 * that server: a run's progress as table, JSON and YAML, and an error echoing an argument). No secret
 * may appear anywhere, and the useful text around each one must.
 */
@EnableKubernetesMockClient(crud = true)
class EveryOutputPathRedactsCredentialsTest {
  private static final String USEFUL = "kubeadm upgrade apply failed on cp-1 (exit 1)";
  private static final String TASK_QUEUE = "redaction";
  private static final String RUN_ID = "cp-upgrade/fleet/prod/v1.31.2";
  private static final String KEY_BODY = "MIIEpAIBAAKCAQEAq7BFUpkGp3+LQmlQYx2e";
  private static final String ENCODED_KEY = Base64.getEncoder().encodeToString(
      ("-----BEGIN PRIVATE KEY-----\n" + KEY_BODY + "\n-----END PRIVATE KEY-----\n").getBytes(StandardCharsets.US_ASCII));

  /** A credential form: how it is written, the secret in it, and what must survive redaction. */
  record Form(String name, String text, String secret, String kept) {}

  static final List<Form> FORMS = List.of(
      new Form("YAML token", "token: yamlT0k3nQ7", "yamlT0k3nQ7", "token: "),
      new Form("YAML password", "password: \"yamlPa55Q7\"", "yamlPa55Q7", "password: "),
      new Form("kubeconfig client key", "client-key-data: a3ViZWNvbmZpZ0tleVE3", "a3ViZWNvbmZpZ0tleVE3", "client-key-data: "),
      new Form("JSON password", "{\"password\": \"jsonPa55Q7\"}", "jsonPa55Q7", "password"),
      new Form("JSON token", "{\"token\":\"jsonT0k3nQ7\"}", "jsonT0k3nQ7", "token"),
      new Form("PEM private key", "-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY + "\n-----END RSA PRIVATE KEY-----",
          "q7BFUpkGp3", "-----BEGIN RSA PRIVATE KEY-----"),
      new Form("base64 PEM private key", "tls.key: " + ENCODED_KEY, ENCODED_KEY.substring(24, 64), "tls.key: "),
      new Form("Bearer header", "Authorization: Bearer bearerT0k3nQ7.e30.c2ln", "bearerT0k3nQ7", "Authorization: Bearer "),
      new Form("Basic header", "Authorization: Basic YmFzaWNRNzpwYXNzUTc=", "YmFzaWNRNzpwYXNzUTc", "Authorization: Basic "),
      new Form("flag", "--token flagT0k3nQ7", "flagT0k3nQ7", "--token "),
      new Form("environment", "K3S_TOKEN=envT0k3nQ7", "envT0k3nQ7", "K3S_TOKEN="),
      new Form("URL password", "postgres://k3s:urlPa55Q7@10.0.0.5:5432/k3s", "urlPa55Q7", "@10.0.0.5:5432/k3s"));

  /** What a host, a server or a user said: every form at once, around the useful part. */
  static final String SAID = USEFUL + ": " + FORMS.stream().map(Form::text).collect(Collectors.joining(" | "));

  KubernetesClient client;
  @TempDir Path dir;

  @Test
  void noCredentialFormReachesLogsCustomResourcesHistoriesOrTheCli() throws Exception {
    List<String> outputs = new ArrayList<>();
    ByteArrayOutputStream textLog = new ByteArrayOutputStream();
    ByteArrayOutputStream jsonLog = new ByteArrayOutputStream();
    ch.qos.logback.classic.Logger root =
        (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    OutputStreamAppender<ILoggingEvent> text = productAppender("text", textLog);
    OutputStreamAppender<ILoggingEvent> json = productAppender("json", jsonLog);
    root.addAppender(text);
    root.addAppender(json);
    try {
      outputs.addAll(customResource());
      outputs.addAll(historyAndCli());
    } finally {
      root.detachAppender(text);
      root.detachAppender(json);
    }
    outputs.add(textLog.toString(StandardCharsets.UTF_8));
    outputs.add(jsonLog.toString(StandardCharsets.UTF_8));
    List<String> names = List.of("status", "conditions", "events", "activity failure in history",
        "workflow failure in history", "whole history", "failure seen by the client", "cli table", "cli json",
        "cli yaml", "cli error", "text log", "json log");
    assertEquals(names.size(), outputs.size());

    for (int i = 0; i < outputs.size(); i++) {
      String output = outputs.get(i);
      for (Form form : FORMS) {
        assertTrue(!output.contains(form.secret()), names.get(i) + " shows the " + form.name() + ": " + output);
      }
      if (!names.get(i).equals("whole history")) {
        assertTrue(output.contains(USEFUL), names.get(i) + " lost the useful text: " + output);
        for (Form form : FORMS) {
          assertTrue(output.contains(form.kept()), names.get(i) + " lost '" + form.kept() + "' of the " + form.name()
              + ": " + output);
        }
      }
    }
  }

  /** A custom resource refused with {@link #SAID}: its stored status and conditions, and its Events. */
  private List<String> customResource() {
    InplaceCrds.install(client);
    ControlPlaneUpgrade cr = new ControlPlaneUpgrade();
    cr.setMetadata(new ObjectMetaBuilder().withName("prod-cp").withNamespace("fleet").build());
    cr.setSpec(new ControlPlaneUpgradeSpec());
    cr.getSpec().setVersion("v1.31.2");
    ControlPlaneUpgrade created = client.resource(cr).create();

    StatusDoor.refuse(client, created, UpgradeFailures.INVALID_REQUEST, SAID);

    ControlPlaneUpgrade stored = client.resources(ControlPlaneUpgrade.class).inNamespace("fleet").withName("prod-cp").get();
    assertNotNull(stored.getStatus(), "the status was written");
    String events = client.v1().events().inNamespace("fleet").list().getItems().stream()
        .map(e -> e.getReason() + ": " + e.getMessage()).collect(Collectors.joining("\n"));
    String conditions = stored.getStatus().getConditions().stream()
        .map(c -> c.getType() + " " + c.getReason() + ": " + c.getMessage()).collect(Collectors.joining("\n"));
    return List.of(stored.getStatus().getMessage(), conditions, events);
  }

  /**
   * A run on a port-bound Temporal test server, with the converter every process uses: its activity
   * fails with {@link #SAID}, its progress says it, and then it fails with it itself. The CLI reads
   * the progress in three formats, and echoes {@link #SAID} given as a run ID.
   */
  private List<String> historyAndCli() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    TestServer.PortBoundTestServer server = TestServer.createPortBoundServer(port, true);
    WorkflowServiceStubs stubs = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:" + port).build());
    try (TemporalConnection temporal = TemporalConnection.over(stubs, "default", server)) {
      WorkerFactory factory = WorkerFactory.newInstance(temporal.client());
      factory.newWorker(TASK_QUEUE).registerWorkflowImplementationTypes(LeakyRunImpl.class);
      factory.getWorker(TASK_QUEUE).registerActivitiesImplementations(new LeakyStepImpl());
      factory.start();
      try {
        return runAndReadEverywhere(temporal.client(), port);
      } finally {
        factory.shutdownNow();
        factory.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  private List<String> runAndReadEverywhere(WorkflowClient client, int port) {
    LeakyRun run = client.newWorkflowStub(LeakyRun.class,
        WorkflowOptions.newBuilder().setWorkflowId(RUN_ID).setTaskQueue(TASK_QUEUE).build());
    WorkflowClient.start(run::run);
    long deadline = System.currentTimeMillis() + 20_000;
    while (!run.progress().message().equals(SAID)) {
      if (System.currentTimeMillis() > deadline) {
        fail("the run never recorded its step's failure: " + run.progress().message());
      }
      sleep(50);
    }

    Map<String, String> env = Map.of("TEMPORAL_ADDRESS", "127.0.0.1:" + port, "TEMPORAL_NAMESPACE", "default",
        "TEMPORAL_CONFIG_FILE", dir.resolve("no-profile-file.toml").toString());
    List<String> cli = new ArrayList<>();
    for (String format : List.of("table", "json", "yaml")) {
      CliDoor.Printed printed = CliDoor.print(List.of("status", RUN_ID, "-o", format), env);
      assertEquals(0, printed.exitCode(), format + ": " + printed.err());
      cli.add(printed.out());
    }
    CliDoor.Printed refused = CliDoor.print(List.of("status", SAID), env);
    assertEquals(2, refused.exitCode(), refused.err());
    cli.add(refused.err());

    run.finish();
    String seenByClient;
    try {
      WorkflowStub.fromTyped(run).getResult(Void.class);
      throw new AssertionError("the run should have failed");
    } catch (WorkflowFailedException e) {
      seenByClient = ((ApplicationFailure) e.getCause()).getOriginalMessage();
    }

    List<HistoryEvent> events = client.fetchHistory(RUN_ID).getEvents();
    String activityFailure = events.stream().filter(HistoryEvent::hasActivityTaskFailedEventAttributes)
        .map(e -> e.getActivityTaskFailedEventAttributes().getFailure().getMessage()).findFirst().orElseThrow();
    String workflowFailure = events.stream().filter(HistoryEvent::hasWorkflowExecutionFailedEventAttributes)
        .map(e -> e.getWorkflowExecutionFailedEventAttributes().getFailure().getMessage()).findFirst().orElseThrow();
    String whole = events.stream().map(HistoryEvent::toString).collect(Collectors.joining("\n"));

    List<String> outputs = new ArrayList<>(List.of(activityFailure, workflowFailure, whole, seenByClient));
    outputs.addAll(cli);
    return outputs;
  }

  /** An appender with the encoder that the worker's own logback.xml configures for {@code format}. */
  @SuppressWarnings("unchecked")
  private static OutputStreamAppender<ILoggingEvent> productAppender(String format, ByteArrayOutputStream sink)
      throws Exception {
    LoggerContext product = new LoggerContext();
    product.putProperty("INPLACE_LOG_FORMAT", format);
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(product);
    configurator.doConfigure(EveryOutputPathRedactsCredentialsTest.class.getResource("/logback.xml"));
    OutputStreamAppender<ILoggingEvent> configured = (OutputStreamAppender<ILoggingEvent>)
        product.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).getAppender("OUT");
    assertNotNull(configured, "logback.xml has its OUT appender for " + format);
    Encoder<ILoggingEvent> encoder = configured.getEncoder();
    OutputStreamAppender<ILoggingEvent> capture = new OutputStreamAppender<>();
    capture.setContext(product);
    capture.setName("capture-" + format);
    capture.setEncoder(encoder);
    capture.setOutputStream(sink);
    capture.start();
    return capture;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A parent run's shape, as far as the CLI's {@code status} asks. */
  @WorkflowInterface
  public interface LeakyRun {
    @WorkflowMethod
    void run();

    @QueryMethod
    UpgradeProgress progress();

    @SignalMethod
    void finish();
  }

  /** One host step that fails saying {@link #SAID}, and logs it as an activity would. */
  @ActivityInterface
  public interface LeakyStep {
    void upgrade();
  }

  public static final class LeakyStepImpl implements LeakyStep {
    private static final Logger log = LoggerFactory.getLogger("dev.inplace.activities.host.HostActivitiesImpl");

    @Override
    public void upgrade() {
      log.warn("upgrade of cp-1 failed: {}", SAID, new IllegalStateException(SAID));
      throw UpgradeFailures.nonRetryable(UpgradeFailures.KUBEADM_UPGRADE_FAILED, SAID);
    }
  }

  public static final class LeakyRunImpl implements LeakyRun {
    private final LeakyStep step = Workflow.newActivityStub(LeakyStep.class, ActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofSeconds(10))
        .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
        .build());
    private String message = "upgrading";
    private boolean finished;

    @Override
    public void run() {
      try {
        step.upgrade();
      } catch (ActivityFailure e) {
        // The progress says what the host said, as given (a query answer is not stored in history).
        message = SAID;
      }
      Workflow.await(() -> finished);
      throw UpgradeFailures.nonRetryable(UpgradeFailures.KUBEADM_UPGRADE_FAILED, SAID);
    }

    @Override
    public UpgradeProgress progress() {
      NodeStatus node = new NodeStatus("prod-cp-1", "cp-1", NodeRole.CONTROL_PLANE, NodePhase.ROLLED_BACK,
          UpgradeStep.RESTART, 1, 2, UpgradeFailures.KUBEADM_UPGRADE_FAILED, message, "node-upgrade/fleet/prod-cp-1/v1.31.2");
      return new UpgradeProgress("ControlPlaneUpgrade", new ClusterRef("fleet", "prod"), "v1.31.2",
          UpgradeProgress.RunPhase.HALTED, message, false, "1", 1, 1, 0, 1, 0, 0, null, List.of(node));
    }

    @Override
    public void finish() {
      finished = true;
    }
  }
}
