package dev.inplace.sandbox.hosts;

import dev.inplace.sandbox.faults.FaultInjector;
import dev.inplace.workflows.api.UpgradeStep;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.NodeSystemInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Plays the kubelet of every simulated node against a Kubernetes API server: it reports the version
 * of the binary actually installed and restarted, never the one an upgrade hoped for.
 *
 * <p>Every poll it reads each node's service state and restart counter (written by the fake {@code
 * systemctl}). When the counter changes the Node turns NotReady; after the startup delay the
 * installed {@code k3s --version} (kubeadm nodes: {@code kubelet --version}) decides: Ready at the printed version, or NotReady when the
 * binary does not run, the service is not active, or a verify fault is armed for that version. A
 * node whose service fails or stops turns NotReady. Status writes that fail (Node missing,
 * conflict) are retried on the next poll.
 *
 * <p>Control-plane nodes are k3s servers with an embedded etcd member, and carry k3s's node
 * condition {@value #ETCD_VOTER_CONDITION}: a restarted server rejoins etcd as a learner (False,
 * {@code MemberIsLearner}) and is promoted to a voter (True, {@code MemberNotLearner}) when it is
 * Ready again.
 *
 * <p>Each start of a node's binary is recorded with the file's sha256 ({@link #binaryStarts}).
 */
public final class KubeletSimulator implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(KubeletSimulator.class);
  private static final Duration VERSION_TIMEOUT = Duration.ofSeconds(5);

  /** The condition k3s servers with embedded etcd publish on their Node. */
  public static final String ETCD_VOTER_CONDITION = "EtcdIsVoter";

  /**
   * @param startupDelay how long a restarted kubelet stays NotReady before it reports
   * @param pollInterval how often the node state is read
   */
  public record Settings(Duration startupDelay, Duration pollInterval) {
    public Settings {
      if (startupDelay.isNegative() || pollInterval.isNegative() || pollInterval.isZero()) {
        throw new IllegalArgumentException("startupDelay must be >= 0 and pollInterval > 0");
      }
    }

    /**
     * How often the simulator looks: a real kubelet reports as soon as it is up, so the simulated one
     * should not add much more than the startup delay to a restart (it was 200 ms, issue 12).
     */
    public static final Duration POLL = Duration.ofMillis(50);

    public static Settings defaults() {
      return new Settings(Duration.ofSeconds(1), POLL);
    }
  }

  /** What the kubelet wants the Node status to say. A null version leaves nodeInfo as it is. */
  private record Report(boolean ready, String reason, String message, String version) {
    static Report ready(String version) {
      return new Report(true, "KubeletReady", "kubelet is posting ready status", version);
    }

    static Report notReady(String message) {
      return new Report(false, "KubeletNotReady", message, null);
    }
  }

  private static final class NodeState {
    final SimulatedNode node;
    long restarts;
    String service;
    Optional<String> verifyFault;
    long startingUntilNanos = -1;
    Report desired;
    Report published;
    String publishError;

    NodeState(SimulatedNode node) {
      this.node = node;
    }
  }

  private final KubernetesClient client;
  private final Settings settings;
  /** Touched only on the simulator's thread (nodes join through {@link #add}). */
  private final List<NodeState> states = new ArrayList<>();
  private final ScheduledExecutorService executor;
  private final List<BinaryStart> starts = new CopyOnWriteArrayList<>();

  private KubeletSimulator(KubernetesClient client, List<SimulatedNode> nodes, Settings settings) {
    this.client = client;
    this.settings = settings;
    nodes.forEach(n -> states.add(new NodeState(n)));
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kubelet-simulator");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts simulating the kubelets of {@code nodes}; returns once each node's current version and
   * readiness has been evaluated and (when its Node exists) published.
   */
  public static KubeletSimulator start(
      KubernetesClient client, List<SimulatedNode> nodes, Settings settings) {
    KubeletSimulator simulator = new KubeletSimulator(client, List.copyOf(nodes), settings);
    try {
      simulator.executor.submit(simulator::initialise).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      simulator.close();
      throw new IllegalStateException("interrupted while starting the kubelet simulator", e);
    } catch (ExecutionException e) {
      simulator.close();
      throw new IllegalStateException("kubelet simulator failed to start", e.getCause());
    }
    long poll = settings.pollInterval().toNanos();
    simulator.executor.scheduleWithFixedDelay(simulator::poll, poll, poll, TimeUnit.NANOSECONDS);
    return simulator;
  }

  public static KubeletSimulator start(KubernetesClient client, List<SimulatedNode> nodes) {
    return start(client, nodes, Settings.defaults());
  }

  /**
   * Starts simulating the kubelet of a node that joined after the start (a Machine provisioned by
   * Cluster API); returns once its version and readiness have been evaluated and (when its Node
   * exists) published. Adding a node already simulated does nothing.
   */
  public void add(SimulatedNode node) {
    try {
      executor.submit(() -> {
        if (states.stream().anyMatch(s -> s.node.name().equals(node.name()))) {
          return;
        }
        NodeState s = new NodeState(node);
        states.add(s);
        initialiseNode(s);
      }).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while adding node " + node.name(), e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot simulate the kubelet of " + node.name(), e.getCause());
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("kubelet simulator did not stop within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void initialise() {
    for (NodeState s : states) {
      initialiseNode(s);
    }
  }

  private void initialiseNode(NodeState s) {
    withNode(
        s,
        () -> {
          s.restarts = readRestarts(s);
          recordStart(s);
          s.service = readServiceState(s);
          s.verifyFault = verifyFault(s);
          s.desired = evaluate(s);
          publish(s);
        });
  }

  private void poll() {
    for (NodeState s : states) {
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      // One node's trouble must never stop the simulation of the others (or the schedule).
      withNode(s, () -> pollNode(s));
    }
  }

  private void pollNode(NodeState s) {
    if (s.desired == null) {
      s.desired = evaluate(s); // initialisation failed for this node: start over
    }
    long restarts = readRestarts(s);
    String service = readServiceState(s);
    Optional<String> fault = verifyFault(s);
    long now = System.nanoTime();
    if (restarts != s.restarts) {
      s.restarts = restarts;
      recordStart(s);
      s.startingUntilNanos = now + settings.startupDelay().toNanos();
      s.desired = Report.notReady("kubelet is starting: " + s.node.service() + " restarted");
      LOG.info("node {}: {} restarted (restart #{})", s.node.name(), s.node.service(), restarts);
    } else if (s.startingUntilNanos >= 0) {
      if (now - s.startingUntilNanos >= 0) {
        s.startingUntilNanos = -1;
        s.desired = evaluate(s);
      }
    } else if (!service.equals(s.service) || !fault.equals(s.verifyFault)) {
      s.desired = evaluate(s);
    }
    s.service = service;
    s.verifyFault = fault;
    if (!s.desired.equals(s.published)) {
      publish(s);
    }
  }

  /**
   * Every start of a node's Kubernetes binary seen so far (the estate's start included), in order:
   * ground truth of which file ran, held in the sandbox's memory.
   */
  public List<BinaryStart> binaryStarts() {
    return List.copyOf(starts);
  }

  /** The service (re)started: the binary it runs is the file in place now. */
  private void recordStart(NodeState s) {
    Path binary = s.node.root().resolve(s.node.versionBinary());
    starts.add(
        new BinaryStart(
            s.node.name(), "/" + s.node.versionBinary(), BinaryDigest.sha256(binary), s.restarts, Instant.now().toString()));
  }

  /** What a kubelet starting now on this node would report. */
  private Report evaluate(NodeState s) {
    String service = readServiceState(s);
    if (!"active".equals(service)) {
      return Report.notReady("service " + s.node.service() + " is " + service);
    }
    Optional<String> version = installedVersion(s);
    if (version.isEmpty()) {
      return Report.notReady("the kubelet does not run: " + s.node.versionBinary() + " --version failed");
    }
    if (verifyFault(s).filter(version.get()::equals).isPresent()) {
      return Report.notReady(
          "container runtime network not ready: NetworkReady=false (sandbox verify fault at "
              + version.get()
              + ")");
    }
    return Report.ready(s.node.kubeletVersion(version.get()));
  }

  private void publish(NodeState s) {
    Report report = s.desired;
    try {
      boolean server = s.node.reportsEtcdVoter();
      client.nodes().withName(s.node.name()).editStatus(node -> withReport(node, report, server));
    } catch (KubernetesClientException e) {
      String error = e.getCode() + " " + e.getMessage();
      if (!error.equals(s.publishError)) {
        LOG.warn("node {}: cannot update Node status yet ({}), will retry", s.node.name(), error);
        s.publishError = error;
      }
      return;
    }
    s.publishError = null;
    s.published = report; // only called when the report changed: every publish is a transition
    if (report.ready()) {
      LOG.info("node {}: Ready at {}", s.node.name(), report.version());
    } else {
      LOG.info("node {}: NotReady: {}", s.node.name(), report.message());
    }
  }

  private static Node withReport(Node node, Report report, boolean server) {
    NodeStatus status = node.getStatus() == null ? new NodeStatus() : node.getStatus();
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    List<NodeCondition> conditions = new ArrayList<>();
    if (status.getConditions() != null) {
      for (NodeCondition c : status.getConditions()) {
        if (!"Ready".equals(c.getType()) && !ETCD_VOTER_CONDITION.equals(c.getType())) {
          conditions.add(c);
        }
      }
    }
    conditions.add(
        condition(status, "Ready", report.ready(), report.reason(), report.message(), now));
    if (server) {
      // The member is promoted once the server is Ready again; until then it is a learner.
      conditions.add(
          report.ready()
              ? condition(
                  status,
                  ETCD_VOTER_CONDITION,
                  true,
                  "MemberNotLearner",
                  "Node is a voting member of the etcd cluster",
                  now)
              : condition(
                  status,
                  ETCD_VOTER_CONDITION,
                  false,
                  "MemberIsLearner",
                  "Node has not been promoted to voting member of the etcd cluster",
                  now));
    }
    status.setConditions(conditions);
    if (report.version() != null) {
      NodeSystemInfo info =
          status.getNodeInfo() == null ? new NodeSystemInfo() : status.getNodeInfo();
      info.setKubeletVersion(report.version());
      info.setKubeProxyVersion(report.version());
      status.setNodeInfo(info);
    }
    node.setStatus(status);
    return node;
  }

  /** A condition of {@code type}, keeping its transition time when its status does not change. */
  private static NodeCondition condition(
      NodeStatus status, String type, boolean value, String reason, String message, String now) {
    String text = value ? "True" : "False";
    String transition = now;
    if (status.getConditions() != null) {
      for (NodeCondition c : status.getConditions()) {
        if (type.equals(c.getType())
            && text.equals(c.getStatus())
            && c.getLastTransitionTime() != null) {
          transition = c.getLastTransitionTime();
        }
      }
    }
    return new NodeConditionBuilder()
        .withType(type)
        .withStatus(text)
        .withReason(reason)
        .withMessage(message)
        .withLastHeartbeatTime(now)
        .withLastTransitionTime(transition)
        .build();
  }

  private Optional<String> installedVersion(NodeState s) {
    Path binary = s.node.root().resolve(s.node.versionBinary());
    if (!Files.isExecutable(binary)) {
      return Optional.empty();
    }
    ProcessBuilder builder =
        new ProcessBuilder(binary.toString(), "--version")
            .directory(s.node.root().toFile())
            .redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    builder.environment().put("INPLACE_HOST_ROOT", s.node.root().toString());
    Process p = null;
    try {
      p = builder.start();
      String output;
      try (InputStream in = p.getInputStream()) {
        // --version prints two short lines; never read an unbounded amount
        output = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
      }
      if (!p.waitFor(VERSION_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
        return Optional.empty();
      }
      for (String token : output.split("\\s+")) {
        if (token.matches("v[0-9].*")) {
          return Optional.of(token);
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      LOG.debug("node {}: k3s --version failed: {}", s.node.name(), e.toString());
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } finally {
      if (p != null && p.isAlive()) {
        p.destroyForcibly();
      }
    }
  }

  private long readRestarts(NodeState s) {
    Path file = servicesDir(s).resolve(s.node.service() + ".restarts");
    try {
      return Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
    } catch (NoSuchFileException e) {
      return 0;
    } catch (IOException | NumberFormatException e) {
      // mid-write or garbage: treat as unchanged, the next poll reads it again
      return s.restarts;
    }
  }

  private String readServiceState(NodeState s) {
    try {
      return Files.readString(servicesDir(s).resolve(s.node.service()), StandardCharsets.UTF_8)
          .trim();
    } catch (NoSuchFileException e) {
      return "inactive";
    } catch (IOException e) {
      return s.service == null ? "inactive" : s.service;
    }
  }

  private static Optional<String> verifyFault(NodeState s) {
    return FaultInjector.armedVersion(s.node.root(), UpgradeStep.VERIFY);
  }

  private static Path servicesDir(NodeState s) {
    return s.node.root().resolve("run/sandbox/services");
  }

  private static void withNode(NodeState s, Runnable work) {
    MDC.put("node", s.node.name());
    try {
      work.run();
    } catch (RuntimeException e) {
      LOG.warn("node {}: kubelet simulation step failed: {}", s.node.name(), e.toString());
    } finally {
      MDC.remove("node");
    }
  }
}
