package dev.inplace.sandbox.stack;

import io.grpc.StatusRuntimeException;
import io.temporal.api.workflowservice.v1.DescribeNamespaceRequest;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The local stack of real processes: Temporal (its Java test server, or the real server as the
 * Temporal CLI's dev server: {@link TemporalServer}), the simulated estate and N workers, each
 * its own OS process started from this JVM's build, with a PID file and a log under the stack
 * directory. The workers are configured only through environment variables, as the Deployment's pods
 * are. {@link #down} stops exactly the processes whose PID files it finds and whose command lines still
 * carry this stack's markers; nothing else.
 */
public final class LocalStack implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
  private static final String WORKER_POLLING = "worker polling task queue";

  /**
   * What to start: {@code workers} worker processes and an estate built from the demo's estate options.
   * {@code workersMayDie}: a worker may be killed (chaos, the crash tests, {@code ./inplace up}), so the
   * workers on the test server do without sticky execution, since it never falls back from a dead
   * worker's sticky queue (the real server does after 5 s); false (bench --e2e, whose one worker lives
   * to the end) runs them as in production, with sticky execution on. {@code temporal}: which server.
   */
  public record Spec(
      int workers, List<String> estateArgs, boolean detached, boolean workersMayDie, TemporalServer temporal) {
    public Spec {
      if (workers < 1 || workers > 9) {
        throw new IllegalArgumentException("--workers must be 1..9 worker processes, got " + workers);
      }
      estateArgs = List.copyOf(estateArgs);
      temporal = temporal == null ? TemporalServer.TEST_SERVER : temporal;
    }

    /** On Temporal's test server. */
    public Spec(int workers, List<String> estateArgs, boolean detached, boolean workersMayDie) {
      this(workers, estateArgs, detached, workersMayDie, TemporalServer.TEST_SERVER);
    }

    /** Workers that may be killed (the default), on Temporal's test server. */
    public Spec(int workers, List<String> estateArgs, boolean detached) {
      this(workers, estateArgs, detached, true);
    }
  }

  /** A refusal or failure to start, with the reason for the user. */
  /** The test bed's Temporal CLI (docs/testbed.md), built first if missing; a failed build refuses the stack. */
  static Path temporalCli() {
    try {
      return dev.inplace.testbed.TestbedBinaries.locate().ensure("temporal").get(0);
    } catch (IllegalStateException e) {
      throw new StackException("--temporal dev-server needs the test bed's Temporal CLI: " + e.getMessage()
          + "; --temporal test-server needs no build");
    }
  }

  public static final class StackException extends RuntimeException {
    public StackException(String message) {
      super(message);
    }
  }

  private final StackLayout layout;
  private final Spec spec;
  private final ClassArchives archives = ClassArchives.forClasspath(StackCommands.classpath());
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  /** Where each role's log stood when its process last started: readiness is read from there on. */
  private final Map<String, Long> logOffsets = new java.util.concurrent.ConcurrentHashMap<>();
  /** The dev server's version, as its GetSystemInfo answers (the test server has none). */
  private volatile String temporalVersion;
  /** The test bed's Temporal CLI that runs the dev server; null on the test server. */
  private Path devServer;

  private LocalStack(StackLayout layout, Spec spec) {
    this.layout = layout;
    this.spec = spec;
  }

  /**
   * Starts the stack in {@code layout} and returns when every process serves. Refuses if a stack is
   * already up there or a fixed port is taken; on any failure stops what it started.
   */
  public static LocalStack up(StackLayout layout, Spec spec, PrintStream out) {
    List<String> running = liveRoles(layout);
    if (!running.isEmpty()) {
      throw new StackException("a stack is already up in " + layout.dir() + " (" + String.join(", ", running)
          + "); stop it with ./inplace down");
    }
    List<Integer> ports = new ArrayList<>(List.of(
        StackLayout.TEMPORAL_PORT, StackLayout.MANAGEMENT_PORT, StackLayout.WORKLOAD_PORT, StackLayout.ESTATE_CONTROL_PORT));
    if (spec.temporal() == TemporalServer.DEV_SERVER) {
      ports.add(StackLayout.TEMPORAL_UI_PORT);
    }
    for (int i = 1; i <= spec.workers(); i++) {
      ports.add(StackLayout.workerHttpPort(i));
    }
    for (int port : ports) {
      if (!free(port)) {
        throw new StackException("127.0.0.1:" + port + " is taken by another process"
            + (port == StackLayout.TEMPORAL_PORT ? " (a Temporal server, or another stack or demo?)" : "")
            + "; the local stack needs it");
      }
    }
    // Built (once) before anything starts: a missing Go toolchain refuses the stack, changing nothing.
    Path devServer = spec.temporal() == TemporalServer.DEV_SERVER ? temporalCli() : null;
    clean(layout);
    LocalStack stack = new LocalStack(layout, spec);
    stack.devServer = devServer;
    try {
      List<String> temporal = devServer != null
          ? StackCommands.temporalDevServer(layout, devServer, StackLayout.TEMPORAL_PORT, StackLayout.TEMPORAL_UI_PORT)
          : StackCommands.temporal(layout, stack.archiveOptions(StackLayout.TEMPORAL));
      stack.start(StackLayout.TEMPORAL, temporal, Map.of());
      stack.start(StackLayout.ESTATE,
          StackCommands.estate(layout, spec.estateArgs(), stack.archiveOptions(StackLayout.ESTATE)), Map.of());
      if (devServer != null) {
        // Serving, not only listening: the frontend answers and the default namespace exists; then the UI.
        stack.await(StackLayout.TEMPORAL, () -> listening(StackLayout.TEMPORAL_PORT) && stack.devServerServes());
        stack.await(StackLayout.TEMPORAL, () -> stack.answers200(StackLayout.temporalUiUrl()));
        out.println("temporal  pid " + stack.pid(StackLayout.TEMPORAL).orElse(-1L) + "  " + StackLayout.temporalAddress()
            + "  Temporal dev server " + stack.temporalVersion + ", database " + layout.temporalDatabase());
        out.println("Temporal UI: " + StackLayout.temporalUiUrl());
      } else {
        stack.await(StackLayout.TEMPORAL, () -> listening(StackLayout.TEMPORAL_PORT));
        out.println("temporal  pid " + stack.pid(StackLayout.TEMPORAL).orElse(-1L) + "  " + StackLayout.temporalAddress());
      }
      stack.await(StackLayout.ESTATE, () -> Files.isRegularFile(layout.estateDescription()));
      out.println("estate    pid " + stack.pid(StackLayout.ESTATE).orElse(-1L) + "  management API http://127.0.0.1:"
          + StackLayout.MANAGEMENT_PORT + ", control http://127.0.0.1:" + StackLayout.ESTATE_CONTROL_PORT);
      stack.archives.whileMissing("worker", () -> stack.writeWorkerArchive(out));
      for (int i = 1; i <= spec.workers(); i++) {
        stack.startWorker(i);
      }
      for (int i = 1; i <= spec.workers(); i++) {
        stack.awaitWorker(i);
        out.println(StackLayout.worker(i) + "  pid " + stack.pid(StackLayout.worker(i)).orElse(-1L)
            + "  http://127.0.0.1:" + StackLayout.workerHttpPort(i));
      }
      Files.writeString(layout.env(), exports(layout));
      return stack;
    } catch (RuntimeException | IOException e) {
      down(layout);
      if (e instanceof StackException s) {
        throw s;
      }
      throw new StackException("the stack did not start: " + e.getMessage());
    }
  }

  /** The {@code export} lines that point the CLI and kubectl at the stack. */
  public static String exports(StackLayout layout) {
    return "export TEMPORAL_ADDRESS=" + StackLayout.temporalAddress() + "\n"
        + "export TEMPORAL_NAMESPACE=default\n"
        + "export KUBECONFIG=" + layout.managementKubeconfig() + "\n";
  }

  /** The environment of worker {@code index}: exactly what the Deployment sets, pointed at the stack. */
  public Map<String, String> workerEnvironment(int index) {
    return workerEnvironment(layout, spec, index);
  }

  static Map<String, String> workerEnvironment(StackLayout layout, Spec spec, int index) {
    String role = StackLayout.worker(index);
    Map<String, String> env = new LinkedHashMap<>();
    env.put("TEMPORAL_ADDRESS", StackLayout.temporalAddress());
    env.put("TEMPORAL_NAMESPACE", "default");
    env.put("KUBECONFIG", layout.managementKubeconfig().toString());
    env.put("INPLACE_ARTIFACT_CACHE", layout.artifactCache(role).toString());
    // The estate's fake releases stand for the artifact mirror a real site would have.
    env.put("INPLACE_ARTIFACT_MIRROR_DIR", layout.estateDir().resolve("artifacts").toString());
    env.put("INPLACE_ARTIFACT_HOSTS", dev.inplace.sandbox.release.FakeReleases.REGISTRY_HOST);
    env.put("INPLACE_HTTP_BIND_ADDRESS", "127.0.0.1");
    env.put("INPLACE_HTTP_PORT", Integer.toString(StackLayout.workerHttpPort(index)));
    env.put("INPLACE_STATUS_INTERVAL_SECONDS", "1");
    // The test server never falls back from a dead worker's sticky queue (docs/local-stack.md): where
    // a worker may die, the workers do without sticky execution; elsewhere they keep the production
    // default (sticky execution on), so a benchmark measures the worker as shipped. The real server
    // (the dev server) moves a dead worker's workflow tasks off its sticky queue after 5 s itself.
    if (spec.workersMayDie() && spec.temporal() == TemporalServer.TEST_SERVER) {
      env.put("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS", "0");
    }
    // Leader election identity and lease namespace, as the downward API sets them in a pod.
    env.put("POD_NAME", role);
    env.put("POD_NAMESPACE", "inplace-system");
    return env;
  }

  /** Starts worker {@code index} (again, after a kill); returns without waiting for it to poll. */
  public long startWorker(int index) {
    String role = StackLayout.worker(index);
    if (pid(role).isPresent()) {
      throw new StackException(role + " is already running");
    }
    // A worker that may be killed is part of a test or a campaign; one that may not is benchmarked,
    // and runs as the image runs it.
    List<String> command = spec.workersMayDie()
        ? StackCommands.worker(layout, role, archiveOptions(role))
        : StackCommands.workerAsShipped(layout, role, archiveOptions(role));
    return start(role, command, workerEnvironment(index));
  }

  private List<String> archiveOptions(String role) {
    return archives.options(layout, role);
  }

  /**
   * The first stack of a build (per classpath) has no worker class archive yet: worker 1 starts once
   * to write it, up to polling, and stops cleanly, so that every worker of this stack, and every
   * restart after a kill, starts from the archive (about 10 s once, for 3 s off every later start).
   */
  private void writeWorkerArchive(PrintStream out) {
    long started = System.nanoTime();
    String role = StackLayout.worker(1);
    startWorker(1);
    awaitWorker(1);
    Optional<ProcessHandle> handle = handle(layout, role);
    boolean cleanly = handle.map(LocalStack::stop).orElse(false);
    deleteQuietly(layout.pidFile(role));
    ClassArchives.ended(layout, role, cleanly);
    out.printf("worker class archive %s in %.1f s%n",
        archives.missing("worker") ? "not written" : "written", (System.nanoTime() - started) / 1e9);
  }

  /** Waits until worker {@code index} polls its task queue. */
  public void awaitWorker(int index) {
    String role = StackLayout.worker(index);
    long skip = logOffsets.getOrDefault(role, 0L);
    await(role, () -> ready(index) || logSince(role, skip).contains(WORKER_POLLING));
  }

  /** SIGKILLs worker {@code index}, as {@code kill -9} does, and waits until it is gone. */
  public void killWorker(int index) {
    kill(StackLayout.worker(index));
  }

  /**
   * SIGKILLs the Temporal dev server, as {@code kill -9} does (no shutdown of any kind: SQLite is left
   * as the crash leaves it), and waits until it is gone; returns the PID it killed.
   */
  public long killTemporal() {
    requireDevServer();
    return kill(StackLayout.TEMPORAL);
  }

  /**
   * Starts the dev server again after {@link #killTemporal}: the same command, so the same database file
   * and the same ports; returns once it serves again (GetSystemInfo and the {@code default} namespace
   * answer), with its PID.
   */
  public long restartTemporal() {
    requireDevServer();
    if (pid(StackLayout.TEMPORAL).isPresent()) {
      throw new StackException("the Temporal server is already running");
    }
    long pid = start(StackLayout.TEMPORAL,
        StackCommands.temporalDevServer(layout, devServer, StackLayout.TEMPORAL_PORT, StackLayout.TEMPORAL_UI_PORT), Map.of());
    await(StackLayout.TEMPORAL, () -> listening(StackLayout.TEMPORAL_PORT) && devServerServes());
    return pid;
  }

  private void requireDevServer() {
    if (devServer == null) {
      throw new StackException("only the dev server survives a kill (its database is a file); this stack runs "
          + spec.temporal().cliName());
    }
  }

  private long kill(String role) {
    ProcessHandle handle = handle(layout, role).orElseThrow(() -> new StackException(role + " is not running"));
    handle.destroyForcibly();
    handle.onExit().orTimeout(10, TimeUnit.SECONDS).join();
    deleteQuietly(layout.pidFile(role));
    ClassArchives.ended(layout, role, false);
    return handle.pid();
  }

  public StackLayout layout() {
    return layout;
  }

  public int workers() {
    return spec.workers();
  }

  /** Which Temporal server this stack runs. */
  public TemporalServer temporalServer() {
    return spec.temporal();
  }

  /** The dev server's version (GetSystemInfo's server version); empty on the test server. */
  public Optional<String> temporalVersion() {
    return Optional.ofNullable(temporalVersion);
  }

  /**
   * The dev server's Web UI, if it answers HTTP 200 within {@code patience} (polled); empty on the test
   * server, which has no UI, or when the UI does not answer.
   */
  public Optional<String> uiUrl(Duration patience) {
    if (spec.temporal() != TemporalServer.DEV_SERVER) {
      return Optional.empty();
    }
    String url = StackLayout.temporalUiUrl();
    long deadline = System.nanoTime() + patience.toNanos();
    do {
      if (answers200(url)) {
        return Optional.of(url);
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Optional.empty();
      }
    } while (System.nanoTime() < deadline);
    return Optional.empty();
  }

  /**
   * Whether the dev server serves: GetSystemInfo answers (its version is kept) and the {@code default}
   * namespace is registered. A client's health check alone passes before the namespace exists.
   */
  private boolean devServerServes() {
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(StackLayout.temporalAddress()).build());
    try {
      var stub = service.blockingStub().withDeadlineAfter(2, TimeUnit.SECONDS);
      String version = stub.getSystemInfo(GetSystemInfoRequest.getDefaultInstance()).getServerVersion();
      stub.describeNamespace(DescribeNamespaceRequest.newBuilder().setNamespace("default").build());
      temporalVersion = version;
      return true;
    } catch (StatusRuntimeException e) {
      return false;
    } finally {
      service.shutdownNow();
    }
  }

  /** The PID of a live process of this stack, if it runs. */
  public Optional<Long> pid(String role) {
    return handle(layout, role).map(ProcessHandle::pid);
  }

  /** PIDs of the live processes: {@code temporal}, {@code estate}, {@code workers} (in order). */
  public Map<String, Object> processes() {
    Map<String, Object> processes = new LinkedHashMap<>();
    processes.put(StackLayout.TEMPORAL, pid(StackLayout.TEMPORAL).orElse(null));
    processes.put(StackLayout.ESTATE, pid(StackLayout.ESTATE).orElse(null));
    List<Long> workers = new ArrayList<>();
    for (int i = 1; i <= spec.workers(); i++) {
      pid(StackLayout.worker(i)).ifPresent(workers::add);
    }
    processes.put("workers", workers);
    return processes;
  }

  @Override
  public void close() {
    down(layout);
  }

  /**
   * Stops every process of the stack in {@code layout}: workers first, then the estate and the server.
   * A PID whose command line no longer carries the stack's markers (the process ended and the PID was
   * reused) is left alone. Returns what it stopped.
   */
  public static List<String> down(StackLayout layout) {
    List<String> stopped = new ArrayList<>();
    List<String> roles = roles(layout);
    // Workers before what they depend on, so they do not log a storm of connection errors.
    roles.sort((a, b) -> Integer.compare(order(a), order(b)));
    for (String role : roles) {
      Optional<ProcessHandle> handle = handle(layout, role);
      boolean cleanly = false;
      if (handle.isPresent()) {
        cleanly = stop(handle.get());
        stopped.add(role + " (pid " + handle.get().pid() + ")");
      }
      deleteQuietly(layout.pidFile(role));
      ClassArchives.ended(layout, role, cleanly);
    }
    return stopped;
  }

  private static int order(String role) {
    return role.startsWith("worker-") ? 0 : StackLayout.ESTATE.equals(role) ? 1 : 2;
  }

  /** SIGTERM, then SIGKILL after 15 s; whether the process ended on the SIGTERM. */
  private static boolean stop(ProcessHandle process) {
    process.destroy(); // SIGTERM: shutdown hooks close servers and clients
    try {
      process.onExit().get(15, TimeUnit.SECONDS);
      return true;
    } catch (Exception e) {
      process.destroyForcibly();
      process.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> null).join();
      return false;
    }
  }

  /** Roles with a PID file. */
  private static List<String> roles(StackLayout layout) {
    List<String> roles = new ArrayList<>();
    if (!Files.isDirectory(layout.pids())) {
      return roles;
    }
    try (var files = Files.list(layout.pids())) {
      files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".pid"))
          .forEach(n -> roles.add(n.substring(0, n.length() - 4)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return roles;
  }

  /** Roles whose PID file names a live process of this stack. */
  private static List<String> liveRoles(StackLayout layout) {
    return roles(layout).stream()
        .filter(role -> handle(layout, role).isPresent())
        .map(role -> role + " pid " + handle(layout, role).get().pid())
        .toList();
  }

  /** The live process named by a role's PID file, only if its command line carries this stack's markers. */
  static Optional<ProcessHandle> handle(StackLayout layout, String role) {
    Path file = layout.pidFile(role);
    long pid;
    try {
      pid = Long.parseLong(Files.readString(file).trim());
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(h -> carriesMarkers(h, layout, role));
  }

  private static boolean carriesMarkers(ProcessHandle process, StackLayout layout, String role) {
    List<String> args = commandLine(process);
    return args.containsAll(StackCommands.markers(layout, role))
        || (StackLayout.TEMPORAL.equals(role) && args.containsAll(StackCommands.devServerMarkers(layout)));
  }

  /** A process's command line: {@code /proc/PID/cmdline} on Linux (complete), else what the JDK reports. */
  private static List<String> commandLine(ProcessHandle process) {
    Path proc = Path.of("/proc", Long.toString(process.pid()), "cmdline");
    try {
      if (Files.isReadable(proc)) {
        return List.of(new String(Files.readAllBytes(proc), StandardCharsets.UTF_8).split("\0"));
      }
    } catch (IOException e) {
      return List.of(); // gone meanwhile
    }
    return process.info().arguments().map(List::of).orElse(List.of());
  }

  private long start(String role, List<String> command, Map<String, String> env) {
    try {
      Files.createDirectories(layout.pids());
      Files.createDirectories(layout.logs());
      logOffsets.put(role, logSize(role));
      List<String> full = new ArrayList<>();
      // Detached (./inplace up): its own session, so closing the terminal does not hang the stack up.
      if (spec.detached() && Files.isExecutable(Path.of("/usr/bin/setsid"))) {
        full.add("/usr/bin/setsid");
      }
      full.addAll(command);
      ProcessBuilder builder = new ProcessBuilder(full)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(layout.log(role).toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      Map<String, String> environment = builder.environment();
      Map<String, String> inherited = Map.copyOf(environment);
      environment.clear(); // only what the stack sets: no stray TEMPORAL_* or KUBECONFIG of the caller
      for (String key : List.of("PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "JAVA_HOME", "INPLACE_LOG_LEVEL",
          "INPLACE_SSH_IDLE_SECONDS")) { // the last for bench --e2e's before/after of connection reuse
        if (inherited.containsKey(key)) {
          environment.put(key, inherited.get(key));
        }
      }
      environment.putAll(env);
      Process process = builder.start();
      Files.writeString(layout.pidFile(role), process.pid() + "\n");
      return process.pid();
    } catch (IOException e) {
      throw new StackException("cannot start " + role + ": " + e.getMessage());
    }
  }

  /** Waits until {@code ready}, failing with the end of the role's log if its process dies or times out. */
  private void await(String role, BooleanSupplier ready) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (!ready.getAsBoolean()) {
      if (handle(layout, role).isEmpty()) {
        throw new StackException(role + " exited while starting; the end of " + layout.log(role) + ":\n" + tail(role));
      }
      if (System.nanoTime() > deadline) {
        throw new StackException(role + " not ready after " + START_TIMEOUT.toSeconds() + " s; the end of "
            + layout.log(role) + ":\n" + tail(role));
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StackException("interrupted while starting " + role);
      }
    }
  }

  /** {@code /readyz} of the worker's HTTP server answers 200 (once the worker serves it). */
  private boolean ready(int index) {
    return answers200("http://127.0.0.1:" + StackLayout.workerHttpPort(index) + "/readyz");
  }

  private boolean answers200(String url) {
    try {
      HttpResponse<Void> response = http.send(
          HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding());
      return response.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private long logSize(String role) {
    try {
      return Files.exists(layout.log(role)) ? Files.size(layout.log(role)) : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  private String logSince(String role, long offset) {
    try {
      byte[] bytes = Files.exists(layout.log(role)) ? Files.readAllBytes(layout.log(role)) : new byte[0];
      return offset >= bytes.length ? "" : new String(bytes, (int) offset, bytes.length - (int) offset, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private String tail(String role) {
    return tailOf(logSince(role, 0));
  }

  /** The last 3,000 characters of a log, or a word that it is empty (never an empty string). */
  static String tailOf(String log) {
    if (log.isBlank()) {
      return "(empty: the process wrote nothing yet)";
    }
    return log.length() > 3000 ? log.substring(log.length() - 3000) : log;
  }

  private static boolean free(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean listening(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Removes the state of a previous stack (never while one is up: {@link #up} checks first). */
  private static void clean(StackLayout layout) {
    try {
      Files.createDirectories(layout.dir());
      for (Path p : List.of(layout.pids(), layout.logs(), layout.estateDir(), layout.dir().resolve("workers"),
          layout.estateDescription(), layout.managementKubeconfig(), layout.workloadKubeconfig(),
          layout.demoResources(), layout.env(), layout.pendingArchive("any").getParent())) {
        deleteTree(p);
      }
      // The dev server's database and SQLite's companions (-wal, -shm, -journal): a new stack has a
      // new estate, and a previous stack's runs would act on clusters that are gone.
      String database = layout.temporalDatabase().getFileName().toString();
      try (var files = Files.list(layout.dir())) {
        for (Path p : files.filter(f -> f.getFileName().toString().startsWith(database)).toList()) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clean " + layout.dir(), e);
    }
  }

  public static void deleteTree(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    Files.walkFileTree(path, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.delete(file);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
        Files.delete(d);
        return FileVisitResult.CONTINUE;
      }
    });
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // left behind: the next up or down finds it stale and ignores it
    }
  }
}
