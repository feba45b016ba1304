package dev.inplace.worker.extension;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.worker.intake.ArtifactSettings;
import dev.inplace.worker.intake.RunIntake;
import dev.inplace.activities.kube.KubeClients;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.client.WorkflowClient;

/**
 * The CAPI runtime extension of the worker (DESIGN s.4): discovery, CanUpdateMachine,
 * CanUpdateMachineSet and UpdateMachine over HTTPS, UpdateMachine starting NodeUpgrade runs on the
 * worker's task queue. See docs/capi-extension.md.
 */
public final class CapiExtension implements AutoCloseable {
  private final HookServer server;
  private final TemporalNodeRuns runs;
  private final KubeClients kubeClients;

  private CapiExtension(HookServer server, TemporalNodeRuns runs, KubeClients kubeClients) {
    this.server = server;
    this.runs = runs;
    this.kubeClients = kubeClients;
  }

  /** Starts serving; the management client stays the caller's. */
  public static CapiExtension start(
      ExtensionOptions options, KubernetesClient management, WorkflowClient client, String taskQueue) {
    return start(options, management, client, taskQueue, ArtifactSettings.fromEnvironment(System.getenv()));
  }

  /** As above, with the catalogue source policy given (the sandbox's local mirror). */
  public static CapiExtension start(
      ExtensionOptions options, KubernetesClient management, WorkflowClient client, String taskQueue,
      ArtifactSourcePolicy artifacts) {
    KubeClients kubeClients = new KubeClients(management);
    TemporalNodeRuns runs = new TemporalNodeRuns(client, taskQueue);
    UpdateMachineHook update = new UpdateMachineHook(management, runs, new KubeWorkloadNodes(kubeClients),
        new RunIntake(management, artifacts));
    try {
      HookServer server =
          HookServer.start(options, CanUpdateHook::canUpdateMachine, CanUpdateHook::canUpdateMachineSet, update::handle,
              new GenerateUpgradePlanHook(management)::handle);
      return new CapiExtension(server, runs, kubeClients);
    } catch (RuntimeException e) {
      runs.close();
      kubeClients.close();
      throw e;
    }
  }

  /** The port the HTTPS server listens on (useful with port 0). */
  public int port() {
    return server.port();
  }

  /**
   * Answers a GenerateUpgradePlan request as the served hook does, reading through {@code
   * management} (RbacCoverageIT records what that reads as the worker's ServiceAccount).
   */
  public static com.fasterxml.jackson.databind.JsonNode answerGenerateUpgradePlan(
      KubernetesClient management, com.fasterxml.jackson.databind.JsonNode request) {
    return new GenerateUpgradePlanHook(management).handle(request);
  }

  /** The calls each hook answered, by {@code "<hook>/<status>"} (see {@link HookServer#answeredCalls}). */
  public java.util.Map<String, Long> answeredCalls() {
    return server.answeredCalls();
  }

  @Override
  public void close() {
    server.close();
    runs.close();
    kubeClients.close();
  }
}
