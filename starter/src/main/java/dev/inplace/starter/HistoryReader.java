package dev.inplace.starter;

import dev.inplace.workflows.api.RunSearchAttributes;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionMetadata;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Reads a cluster's runs from two places, read-only: the CRs' {@code status.history} and {@code
 * status.runs} (management cluster), and Temporal's visibility (List) for runs started without a
 * CR ({@code inplace upgrade}). A server without List (Temporal's Java test server) or a source
 * that cannot be reached becomes a note; the other source is still shown.
 */
final class HistoryReader {
  /** The memo key the worker records a run's "from" version under (RunStarter). */
  static final String MEMO_FROM_VERSION = "inplace.dev/from-version";
  private static final int MAX_TEMPORAL_RUNS = 200;
  static final String NO_LIST = "this Temporal server does not support List (visibility), as Temporal's Java test"
      + " server: runs started with `inplace upgrade` (no custom resource) are not listed";

  private HistoryReader() {}

  /** The visibility query for a cluster's parent runs. */
  static String query(String namespace, String name) {
    return RunSearchAttributes.CLUSTER.getName() + " = '" + namespace + "/" + name + "' AND "
        + RunSearchAttributes.KIND.getName() + " IN ('" + RunSearchAttributes.KIND_CONTROL_PLANE + "', '"
        + RunSearchAttributes.KIND_WORKERS + "')";
  }

  static ClusterHistory read(String namespace, String name, Supplier<KubernetesClient> management,
      Supplier<WorkflowClient> temporal) {
    List<String> notes = new ArrayList<>();
    boolean anySource = false;
    Map<String, ClusterHistory.Run> byId = new LinkedHashMap<>();
    try {
      for (ClusterHistory.Run r : fromResources(management.get(), namespace, name)) {
        byId.putIfAbsent(r.workflowId(), r);
      }
      anySource = true;
    } catch (RuntimeException e) {
      notes.add("the custom resources were not read: " + message(e));
    }
    try {
      for (ClusterHistory.Run t : fromTemporal(temporal.get(), namespace, name)) {
        ClusterHistory.Run mine = byId.get(t.workflowId());
        byId.put(t.workflowId(), mine == null ? t : mine.withTemporal(t));
      }
      anySource = true;
    } catch (RuntimeException e) {
      if (unimplemented(e)) {
        anySource = true;
        notes.add(NO_LIST);
      } else {
        notes.add("Temporal was not read: " + message(e));
      }
    }
    if (!anySource) {
      throw new CliContext.CannotConnectException("neither the management cluster nor Temporal could be read: "
          + String.join("; ", notes), null);
    }
    List<ClusterHistory.Run> runs = new ArrayList<>(byId.values());
    // Newest start first; of runs started together (a WorkersUpgrade's pools), those still going first.
    runs.sort(Comparator.comparing((ClusterHistory.Run r) -> Objects.toString(r.started(), "")).reversed()
        .thenComparing(r -> r.finished() != null)
        .thenComparing(ClusterHistory.Run::workflowId));
    return new ClusterHistory(namespace, name, runs, notes.isEmpty() ? null : notes);
  }

  /** Every CR naming the cluster: its ended runs (status.history), then its runs still going. */
  static List<ClusterHistory.Run> fromResources(KubernetesClient management, String namespace, String name) {
    List<ClusterHistory.Run> runs = new ArrayList<>();
    for (String kind : List.of(RunSearchAttributes.KIND_CONTROL_PLANE, RunSearchAttributes.KIND_WORKERS)) {
      List<GenericKubernetesResource> crs = management.genericKubernetesResources(new ResourceDefinitionContext.Builder()
              .withGroup(ClusterDescriber.INPLACE_GROUP).withVersion(ClusterDescriber.INPLACE_VERSION).withKind(kind)
              .withPlural(kind.toLowerCase(Locale.ROOT) + "s").withNamespaced(true).build())
          .inNamespace(namespace).list().getItems();
      for (GenericKubernetesResource cr : crs) {
        Map<String, Object> body = cr.getAdditionalProperties();
        if (!name.equals(str(ClusterDescriber.at(body, "spec", "clusterName")))) {
          continue;
        }
        String source = kind + "/" + cr.getMetadata().getName();
        List<String> recorded = new ArrayList<>();
        for (Object o : list(ClusterDescriber.at(body, "status", "history"))) {
          if (o instanceof Map<?, ?> e && e.get("workflowId") != null) {
            recorded.add(str(e.get("workflowId")));
            runs.add(new ClusterHistory.Run(str(e.get("workflowId")), kind, str(e.get("machineDeployment")),
                str(e.get("fromVersion")), str(e.get("toVersion")), str(e.get("started")), str(e.get("finished")),
                str(e.get("result")), str(e.get("reason")), integer(e.get("total")), integer(e.get("upgraded")),
                integer(e.get("failed")), integer(e.get("skipped")), source));
          }
        }
        String started = str(ClusterDescriber.at(body, "status", "startTime"));
        for (Object o : list(ClusterDescriber.at(body, "status", "runs"))) {
          if (o instanceof Map<?, ?> r && r.get("workflowId") != null && !recorded.contains(str(r.get("workflowId")))) {
            String pool = str(r.get("machineDeployment"));
            int[] counts = counts(list(ClusterDescriber.at(body, "status", "nodes")), pool);
            runs.add(new ClusterHistory.Run(str(r.get("workflowId")), kind, pool, str(r.get("fromVersion")),
                str(ClusterDescriber.at(body, "spec", "version")), started, null, Objects.toString(str(r.get("phase")), "Starting"),
                str(r.get("reason")), counts[0], counts[1], counts[2], counts[3], source));
          }
        }
      }
    }
    return runs;
  }

  /** The cluster's parent runs in Temporal's visibility; throws UNIMPLEMENTED where List is not supported. */
  static List<ClusterHistory.Run> fromTemporal(WorkflowClient client, String namespace, String name) {
    return client.listExecutions(query(namespace, name)).limit(MAX_TEMPORAL_RUNS).map(HistoryReader::run).toList();
  }

  /** One run as visibility lists it: no node counts (those live in the run and its CR). */
  static ClusterHistory.Run run(WorkflowExecutionMetadata m) {
    String kind = m.getTypedSearchAttributes().get(RunSearchAttributes.KIND);
    String target = m.getTypedSearchAttributes().get(RunSearchAttributes.TARGET_VERSION);
    Object from = m.getMemo(MEMO_FROM_VERSION, String.class);
    return new ClusterHistory.Run(m.getExecution().getWorkflowId(), kind != null ? kind : m.getWorkflowType(), null,
        (String) from, target, time(m.getStartTime()), time(m.getCloseTime()), result(m.getStatus()), null,
        null, null, null, null, "temporal");
  }

  private static boolean unimplemented(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof StatusRuntimeException s && s.getStatus().getCode() == Status.Code.UNIMPLEMENTED) {
        return true;
      }
    }
    return false;
  }

  private static String message(RuntimeException e) {
    return e instanceof CliException || e instanceof CliContext.CannotConnectException ? e.getMessage() : CliErrors.rootMessage(e);
  }

  private static String result(WorkflowExecutionStatus status) {
    return switch (status) {
      case WORKFLOW_EXECUTION_STATUS_COMPLETED -> "Succeeded";
      case WORKFLOW_EXECUTION_STATUS_FAILED, WORKFLOW_EXECUTION_STATUS_TERMINATED,
          WORKFLOW_EXECUTION_STATUS_TIMED_OUT -> "Failed";
      case WORKFLOW_EXECUTION_STATUS_CANCELED -> "Aborted";
      case WORKFLOW_EXECUTION_STATUS_RUNNING, WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW -> "Running";
      default -> "Unknown";
    };
  }

  private static String time(Instant t) {
    return t == null || t.toEpochMilli() <= 0 ? null : t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** total, upgraded, failed, skipped of one pool's rows in status.nodes. */
  private static int[] counts(List<?> nodes, String pool) {
    int[] c = new int[4];
    for (Object o : nodes) {
      if (o instanceof Map<?, ?> n && Objects.equals(str(n.get("pool")), pool)) {
        String phase = str(n.get("phase"));
        c[0]++;
        if ("Upgraded".equals(phase)) {
          c[1]++;
        } else if ("Failed".equals(phase) || "RolledBack".equals(phase) || "RollbackFailed".equals(phase)) {
          c[2]++;
        } else if ("Skipped".equals(phase)) {
          c[3]++;
        }
      }
    }
    return c;
  }

  private static List<?> list(Object o) {
    return o instanceof List<?> l ? l : List.of();
  }

  private static Integer integer(Object o) {
    return o instanceof Number n ? n.intValue() : null;
  }

  private static String str(Object o) {
    return o == null ? null : o.toString();
  }
}
