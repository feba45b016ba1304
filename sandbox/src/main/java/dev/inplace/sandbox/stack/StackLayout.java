package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.SandboxSlot;
import dev.inplace.sandbox.hosts.SandboxHosts;
import java.nio.file.Path;

/**
 * Where the local stack keeps its state and which loopback ports it uses. Everything lives under one
 * directory ({@code .sandbox/stack/} for {@code ./inplace up}, a temporary one for the demo). The ports
 * are those of slot 1 unless this JVM runs in another {@link SandboxSlot}.
 */
public record StackLayout(Path dir) {
  /** Temporal's frontend, test or dev server (the CLI's default address). */
  public static final int TEMPORAL_PORT = 7233 + SandboxSlot.portOffset();
  /** The Web UI of Temporal's dev server ({@code --temporal dev-server}; the CLI's default UI port). */
  public static final int TEMPORAL_UI_PORT = 8233 + SandboxSlot.portOffset();
  /** The estate's management API server (the workers' KUBECONFIG points here). */
  public static final int MANAGEMENT_PORT = 17443 + SandboxSlot.portOffset();
  /** The workload cluster's API server (its kubeconfig is in the {@code edge-1-kubeconfig} Secret). */
  public static final int WORKLOAD_PORT = 17444 + SandboxSlot.portOffset();
  /** The estate's control endpoint: ground truth and fault control for the demo and tests. */
  public static final int ESTATE_CONTROL_PORT = 17480 + SandboxSlot.portOffset();
  /** Worker {@code i} (1-based) serves its metrics and health on {@code WORKER_HTTP_BASE + i}. */
  public static final int WORKER_HTTP_BASE = 18080 + SandboxSlot.portOffset();

  public static final String TEMPORAL = "temporal";
  public static final String ESTATE = "estate";

  public StackLayout {
    dir = dir.toAbsolutePath().normalize();
  }

  public static String worker(int index) {
    return "worker-" + index;
  }

  public static int workerHttpPort(int index) {
    return WORKER_HTTP_BASE + index;
  }

  public static String temporalAddress() {
    return "127.0.0.1:" + TEMPORAL_PORT;
  }

  /** The Temporal dev server's Web UI. */
  public static String temporalUiUrl() {
    return "http://127.0.0.1:" + TEMPORAL_UI_PORT;
  }

  public Path pids() { return dir.resolve("pids"); }
  public Path pidFile(String role) { return pids().resolve(role + ".pid"); }
  public Path logs() { return dir.resolve("logs"); }
  public Path log(String role) { return logs().resolve(role + ".log"); }
  /** The estate's files: node roots, SSH keys, release artifacts and catalogue. */
  public Path estateDir() { return dir.resolve("estate"); }
  /** A node's root directory (its host's filesystem; its journal is under it, {@code HostJournal.PATH}). */
  public Path hostRoot(String node) { return estateDir().resolve(SandboxHosts.HOSTS_DIR).resolve(node); }
  /** Written by the estate once it serves; what the demo needs to drive it. */
  public Path estateDescription() { return dir.resolve("estate.json"); }
  public Path managementKubeconfig() { return dir.resolve("management.kubeconfig"); }
  public Path workloadKubeconfig() { return dir.resolve("workload.kubeconfig"); }
  /** A ControlPlaneUpgrade and a WorkersUpgrade for the estate, to apply with kubectl. */
  public Path demoResources() { return dir.resolve("upgrade.yaml"); }
  /** The Temporal dev server's SQLite database: its histories and visibility; kept after
   * {@code down}, replaced by the next {@code up}. */
  public Path temporalDatabase() { return dir.resolve("temporal.db"); }
  /** The {@code export} lines for the CLI. */
  public Path env() { return dir.resolve("env"); }
  /** Where the process of {@code role} writes its class archive until it has stopped cleanly ({@link ClassArchives}). */
  public Path pendingArchive(String role) { return dir.resolve("cds").resolve(role + ".jsa"); }
  public Path artifactCache(String role) { return dir.resolve("workers").resolve(role).resolve("artifact-cache"); }
}
