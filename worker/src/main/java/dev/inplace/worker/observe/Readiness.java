package dev.inplace.worker.observe;

import dev.inplace.client.TemporalConnection;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Whether this worker can do its job now: each check names what is wrong, or null when fine.
 * {@code /readyz} answers 200 only when every check passes.
 */
public final class Readiness {
  /** One check: null when ready, else the reason. */
  public interface Check extends Supplier<String> {}

  private final Map<String, Check> checks = new LinkedHashMap<>();

  public Readiness add(String name, Check check) {
    checks.put(name, check);
    return this;
  }

  /** The reasons this worker is not ready; empty when it is. */
  public List<String> problems() {
    List<String> problems = new ArrayList<>();
    checks.forEach((name, check) -> {
      String problem;
      try {
        problem = check.get();
      } catch (RuntimeException e) {
        problem = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
      }
      if (problem != null) {
        problems.add(name + ": " + problem);
      }
    });
    return problems;
  }

  /**
   * The worker's checks: Temporal, the management API server, the pollers. A null argument means
   * that part is still starting (not ready).
   */
  public static Readiness ofWorker(
      Supplier<TemporalConnection> temporal, Supplier<KubernetesClient> management, Supplier<BooleanSupplier> polling) {
    return new Readiness()
        .add("temporal", () -> temporal.get() == null ? "connecting" : temporal(temporal.get()).get())
        .add("management-api", () -> management.get() == null ? "connecting" : managementApi(management.get()).get())
        .add("worker", () -> polling.get() == null ? "starting" : polling(polling.get()).get());
  }

  /** Temporal answers GetSystemInfo within two seconds. */
  public static Check temporal(TemporalConnection temporal) {
    return () -> {
      try {
        temporal.service().blockingStub().withDeadlineAfter(2, TimeUnit.SECONDS)
            .getSystemInfo(GetSystemInfoRequest.getDefaultInstance());
        return null;
      } catch (io.grpc.StatusRuntimeException e) {
        return "Temporal frontend not reachable (" + e.getStatus().getCode() + ")";
      }
    };
  }

  /**
   * The management API server answers. Any HTTP answer counts (a 403 on {@code /version} still
   * proves the server is there); no answer does not.
   */
  public static Check managementApi(KubernetesClient management) {
    return () -> {
      try {
        management.getKubernetesVersion();
        return null;
      } catch (KubernetesClientException e) {
        if (e.getCode() > 0 && e.getCode() < 500) {
          return null;
        }
        return "management API server not reachable" + (e.getCode() > 0 ? " (HTTP " + e.getCode() + ")" : "");
      }
    };
  }

  /** The worker's pollers run. */
  public static Check polling(BooleanSupplier polling) {
    return () -> polling.getAsBoolean() ? null : "the worker is not polling its task queue";
  }
}
