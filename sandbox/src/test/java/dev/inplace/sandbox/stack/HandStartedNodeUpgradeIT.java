package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.SearchAttributeRegistration;
import dev.inplace.sandbox.estate.HostRecords;
import dev.inplace.sandbox.hosts.SandboxHost;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowFailedException;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.failure.ApplicationFailure;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A NodeUpgrade started by hand with {@code temporal workflow start} on the real Temporal server
 * (the test bed's {@code temporal server start-dev}), naming a real Machine but another host's
 * address: a real sandbox SSH server that would accept the cluster's key. The worker's first step
 * refuses it with the reason, before the Machine mark, any Secret or any SSH session (issue 34, H4).
 */
@EnableKubernetesMockClient(crud = true)
class HandStartedNodeUpgradeIT {
  static KubernetesMockServer server;
  static KubernetesClient client;

  private static final String NS = "fleet";
  private static final String CLUSTER = "edge-1";
  private static final String QUEUE = "inplace-by-hand";
  private static final String FROM = "v1.30.4+k3s1";

  @TempDir Path dir;

  @Test
  void aRunStartedByHandWithAnotherHostsAddressIsRefusedBeforeAnySecretOrSshSession() throws Exception {
    FakeReleases releases = new FakeReleases(dir.resolve("artifacts"), FakeReleaseSizes.small());
    releases.add(FROM);
    try (SandboxHosts hosts = SandboxHosts.open(dir.resolve("estate"), new SandboxHosts.Settings("inplace", 0, 98))) {
      SandboxHost machineHost = hosts.provision("w-1", NodeRole.WORKER, FROM, releases);
      SandboxHost elsewhere = hosts.provision("w-2", NodeRole.WORKER, FROM, releases);
      HostAccess machine = HostRecords.record(client, NS, CLUSTER, CLUSTER + "-w-1", "w-1", machineHost.address(),
          hosts.user(), hosts.port());
      // The cluster's real Secrets: with them the worker could log in to either host.
      secret(machine.ssh().privateKeySecret(), SshSettings.PRIVATE_KEY_DATA_KEY, hosts.clientPrivateKey());
      secret(machine.ssh().knownHostsSecret(), SshSettings.KNOWN_HOSTS_DATA_KEY, hosts.knownHosts());
      drainRequests();

      int port = freePort();
      Path temporal = LocalStack.temporalCli();
      Process dev = new ProcessBuilder(temporal.toString(), "server", "start-dev", "--ip", "127.0.0.1",
          "--port", Integer.toString(port), "--headless", "--namespace", "default", "--log-level", "warn",
          "--disable-config-file", "--disable-config-env")
          .redirectErrorStream(true).redirectOutput(dir.resolve("dev-server.log").toFile()).start();
      WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
          WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:" + port).build());
      InplaceWorker worker = null;
      try {
        registerSearchAttributes(service, dev);
        WorkflowClient workflows =
            WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
        worker = InplaceWorker.start(workflows, QUEUE, client, dir.resolve("cache"));

        NodeUpgradeRequest madeUp = new NodeUpgradeRequest(
            new NodeTarget(new ClusterRef(NS, CLUSTER), CLUSTER + "-w-1", "w-1", NodeRole.WORKER, elsewhere.address()),
            Distribution.K3S, "v1.31.2+k3s1",
            List.of(new Artifact("k3s", ArtifactKind.BINARY, "https://github.com/k3s-io/k3s/releases/download/k3s",
                "ab".repeat(32), 1, "/usr/local/bin/k3s", "0755")),
            HostProfile.k3sDefaults(), machine.ssh(), new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false),
            60, 0, "amd64").withMarkMachine(true);
        String input = new String(DefaultDataConverter.newDefaultInstance().toPayload(madeUp).orElseThrow()
            .getData().toByteArray(), StandardCharsets.UTF_8);
        String id = "by-hand/" + CLUSTER + "/w-1";
        Process start = new ProcessBuilder(temporal.toString(), "workflow", "start", "--address", "127.0.0.1:" + port,
            "--namespace", "default", "--task-queue", QUEUE, "--type", "NodeUpgradeWorkflow", "--workflow-id", id,
            "--input", input, "--disable-config-file", "--disable-config-env")
            .redirectErrorStream(true).start();
        String startOutput = new String(start.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(start.waitFor(60, TimeUnit.SECONDS) && start.exitValue() == 0, "temporal workflow start: " + startOutput);

        WorkflowFailedException failed = assertThrows(WorkflowFailedException.class,
            () -> workflows.newUntypedWorkflowStub(id).getResult(90, TimeUnit.SECONDS, NodeUpgradeResult.class));

        ApplicationFailure refusal = assertInstanceOf(ApplicationFailure.class, failed.getCause());
        assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, refusal.getType());
        assertEquals("refusing the run's host: address " + elsewhere.address() + " is not one of Machine " + NS + "/"
            + CLUSTER + "-w-1's addresses [" + machineHost.address() + "]: a run's input does not choose the host;"
            + " nothing was changed", refusal.getOriginalMessage());
        List<String> scheduled = new ArrayList<>();
        for (HistoryEvent e : workflows.fetchHistory(id).getEvents()) {
          if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
            scheduled.add(e.getActivityTaskScheduledEventAttributes().getActivityType().getName());
          }
        }
        assertEquals(List.of("ConfirmHostAccess"), scheduled, "the run's activities");
      } finally {
        if (worker != null) {
          worker.close();
        }
        service.shutdownNow();
        dev.destroy();
        if (!dev.waitFor(20, TimeUnit.SECONDS)) {
          dev.destroyForcibly();
        }
      }
      List<RecordedRequest> requests = drainRequests();
      assertEquals(List.of(), requests.stream().filter(r -> !r.getMethod().equals("GET"))
          .map(r -> r.getMethod() + " " + r.getPath()).toList(), "writes to the management cluster (the Machine mark)");
      assertEquals(List.of(), requests.stream().map(RecordedRequest::getPath).filter(p -> p.contains("/secrets"))
          .toList(), "Secrets read");
      assertEquals(0, hosts.sshSessions().orElseThrow(), "SSH sessions on the sandbox hosts");
    }
  }

  private void secret(String name, String key, String value) {
    client.secrets().inNamespace(NS).resource(new SecretBuilder().withNewMetadata().withName(name).endMetadata()
        .addToStringData(key, value).build()).create();
  }

  /** Registers inplace's search attributes once the dev server answers (it takes a few seconds to start). */
  private void registerSearchAttributes(WorkflowServiceStubs service, Process dev) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        SearchAttributeRegistration.ensure(service, "default");
        return;
      } catch (RuntimeException notYetServing) {
        assertTrue(dev.isAlive(), "the dev server exited: " + Files.readString(dir.resolve("dev-server.log")));
        if (System.nanoTime() > deadline) {
          throw notYetServing;
        }
        Thread.sleep(500);
      }
    }
  }

  private static List<RecordedRequest> drainRequests() throws InterruptedException {
    List<RecordedRequest> all = new ArrayList<>();
    for (RecordedRequest r = server.takeRequest(50, TimeUnit.MILLISECONDS); r != null;
        r = server.takeRequest(50, TimeUnit.MILLISECONDS)) {
      all.add(r);
    }
    return all;
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    }
  }
}
