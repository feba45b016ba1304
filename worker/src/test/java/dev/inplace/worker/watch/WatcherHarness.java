package dev.inplace.worker.watch;

import static org.awaitility.Awaitility.await;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.common.SearchAttributeKey;
import io.temporal.common.interceptors.WorkflowClientCallsInterceptor;
import io.temporal.common.interceptors.WorkflowClientCallsInterceptorBase;
import io.temporal.common.interceptors.WorkflowClientInterceptorBase;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * The watcher's world in one process: the fabric8 mock API server in CRUD mode (given by the test)
 * with the generated CRDs and a {@link TestEstate}, Temporal's in-process test server with the
 * stand-in parent workflows, and a record of every workflow start that succeeded (a second run for a
 * CR would show up here).
 */
final class WatcherHarness implements AutoCloseable {
  static final String TASK_QUEUE = "inplace-watch-test";
  static final Duration WAIT = Duration.ofSeconds(20);

  /** The mock server logs every request through java.util.logging: kept quiet (and referenced, so it stays so). */
  private static final java.util.logging.Logger MOCK_LOG = quiet("io.fabric8.mockwebserver");

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  final KubernetesClient kube;
  final TestEstate estate;
  final TestWorkflowEnvironment env;
  final WorkflowClient client;
  /** IDs of the workflows started, one entry per start that succeeded. */
  final List<String> starts = Collections.synchronizedList(new ArrayList<>());
  /** Workflow IDs whose next start fails as an unreachable Temporal would fail it (once each). */
  final java.util.Set<String> failNextStart = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final List<UpgradeWatcher> watchers = new ArrayList<>();

  WatcherHarness(KubernetesClient kube) {
    this(kube, null);
  }

  /** On a real API server, whose administrator's kubeconfig is also the workload cluster's. */
  WatcherHarness(KubernetesClient kube, String workloadKubeconfig) {
    this.kube = kube;
    InplaceCrds.install(kube);
    this.estate = new TestEstate(kube, workloadKubeconfig).create();
    this.env =
        TestWorkflowEnvironment.newInstance(
            TestEnvironmentOptions.newBuilder()
                .setUseTimeskipping(false)
                .setWorkflowClientOptions(
                    WorkflowClientOptions.newBuilder().setInterceptors(new StartRecorder()).validateAndBuildWithDefaults())
                .build());
    for (SearchAttributeKey<?> key : RunSearchAttributes.ALL) {
      env.registerSearchAttribute(
          key.getName(),
          key.getValueType() == IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
              ? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
              : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    Worker worker = env.newWorker(TASK_QUEUE);
    worker.registerWorkflowImplementationTypes(FakeControlPlaneUpgrade.class, FakeWorkersUpgrade.class);
    env.start();
    this.client = env.getWorkflowClient();
  }

  /** Options that react quickly: status every 200 ms, informers re-deliver every CR each second. */
  static WatcherOptions fast() {
    return WatcherOptions.defaults().withStatusInterval(Duration.ofMillis(200)).withResyncPeriod(Duration.ofSeconds(1));
  }

  UpgradeWatcher watcher(WatcherOptions options) {
    UpgradeWatcher watcher = UpgradeWatcher.start(kube, client, TASK_QUEUE, options, TestEstate.ARTIFACTS);
    watchers.add(watcher);
    return watcher;
  }

  <T extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> T create(T cr) {
    return kube.resource(cr).create();
  }

  ControlPlaneUpgrade controlPlane(String name) {
    return kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName(name).get();
  }

  WorkersUpgrade workers(String name) {
    return kube.resources(WorkersUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName(name).get();
  }

  /** Waits until the stored CR's status satisfies {@code condition}; returns that status. */
  @SuppressWarnings("unchecked")
  <T extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> UpgradeStatus awaitStatus(
      T cr, Predicate<UpgradeStatus> condition) {
    Class<T> type = (Class<T>) cr.getClass();
    UpgradeStatus[] seen = new UpgradeStatus[1];
    await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
      T stored = kube.resources(type).inNamespace(TestEstate.NAMESPACE).withName(cr.getMetadata().getName()).get();
      seen[0] = stored == null ? null : stored.getStatus();
      return seen[0] != null && condition.test(seen[0]);
    });
    return seen[0];
  }

  static Predicate<UpgradeStatus> condition(String type, boolean value, String reason) {
    return s -> s.condition(type).filter(c -> c.isTrue() == value && reason.equals(c.getReason())).isPresent();
  }

  static String reason(UpgradeStatus status, String type) {
    return status.condition(type).map(UpgradeCondition::getReason).orElse(null);
  }

  void signal(String workflowId, String signal) {
    client.newUntypedWorkflowStub(workflowId).signal(signal);
  }

  UpgradeProgress progress(String workflowId) {
    return client.newUntypedWorkflowStub(workflowId).query("progress", UpgradeProgress.class);
  }

  <R> R request(String workflowId, Class<R> type) {
    return client.newUntypedWorkflowStub(workflowId).query(FakeRun.REQUEST, type);
  }

  /** Reasons of the Events recorded on a CR, oldest first. */
  List<String> eventReasons(CustomResource<?, ?> cr) {
    return kube.v1().events().inNamespace(TestEstate.NAMESPACE).list().getItems().stream()
        .filter(e -> cr.getMetadata().getName().equals(e.getInvolvedObject().getName()))
        .map(Event::getReason)
        .toList();
  }

  @Override
  public void close() {
    watchers.forEach(UpgradeWatcher::close);
    endOpenRuns();
    env.close();
    // The mock client is left open on purpose: the JUnit extension stops the mock server first and
    // closes the client after. Closing it here (JDK 17's HttpClient cannot close its connections, only
    // stop answering on them) left each watch's WebSocket open and mute, so the server's Vert.x close
    // waited out its 10 s WebSocket closing timeout per watch and raced MockWebServer's own 10 s
    // shutdown wait ("Unable to close MockWebServer"). An open client answers the close at once.
  }

  /**
   * Terminates the runs a test left open. The watchers closed their close-event polls on them
   * (RunFollower), but the test server ignores a cancelled long poll: its thread waits on for the
   * run's close (or its own 20 s deadline), and closing the server waits a second for such threads.
   * A run's end wakes them.
   */
  private void endOpenRuns() {
    for (String id : List.copyOf(starts)) {
      try {
        client.newUntypedWorkflowStub(id).terminate("test over");
      } catch (RuntimeException e) {
        // Ended already: nothing to wake.
      }
    }
  }

  /** Records each workflow start that succeeded; fails those asked to fail first. */
  private final class StartRecorder extends WorkflowClientInterceptorBase {
    @Override
    public WorkflowClientCallsInterceptor workflowClientCallsInterceptor(WorkflowClientCallsInterceptor next) {
      return new WorkflowClientCallsInterceptorBase(next) {
        @Override
        public WorkflowStartOutput start(WorkflowStartInput input) {
          if (failNextStart.remove(input.getWorkflowId())) {
            throw new io.grpc.StatusRuntimeException(io.grpc.Status.UNAVAILABLE.withDescription("test: Temporal went away"));
          }
          WorkflowStartOutput output = super.start(input);
          starts.add(input.getWorkflowId());
          return output;
        }
      };
    }
  }
}
