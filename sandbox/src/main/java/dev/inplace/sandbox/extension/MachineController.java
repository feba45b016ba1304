package dev.inplace.sandbox.extension;

import static dev.inplace.sandbox.extension.CapiObjects.JSON;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The Machine controller's in-place part: with every precondition in place, UpdateMachine polled
 * honouring {@code retryAfterSeconds} until Success with 0, then the markers removed and the Node's
 * kubelet version mirrored into the Machine's status. A Failure is retried with backoff, as
 * controller-runtime does, until the simulated operator gives up. The owners hand it Machines a
 * window at a time.
 */
final class MachineController {
  private static final int GIVE_UP_AFTER_FAILURES = 3;

  private final CapiObjects objects;
  private final KubernetesClient workload;
  private final HookClient hooks;
  private final Map<String, String> settings;
  private final Consumer<String> say;

  MachineController(CapiObjects objects, KubernetesClient workload, HookClient hooks, Map<String, String> settings,
      Consumer<String> say) {
    this.objects = objects;
    this.workload = workload;
    this.hooks = hooks;
    this.settings = settings;
    this.say = say;
  }

  /** One Machine the Machine controller is polling (or, with an outcome, one its owner settled at once). */
  static final class Update {
    final String machine;
    long dueNanos = System.nanoTime();
    int failures;
    String lastMessage = "";
    UpdateOutcome outcome;

    Update(String machine) {
      this.machine = machine;
    }

    static Update finished(UpdateOutcome outcome) {
      Update u = new Update(outcome.machine());
      u.outcome = outcome;
      return u;
    }
  }

  /** Starts Machines {@code window} at a time with the owner's {@code begin} and polls them, each when CAPI would requeue it. */
  void runWindow(List<String> machines, int window, Function<String, Update> begin, Map<String, UpdateOutcome> outcomes) {
    Deque<String> queue = new ArrayDeque<>(machines);
    List<Update> active = new ArrayList<>();
    while (!queue.isEmpty() || !active.isEmpty()) {
      while (active.size() < window && !queue.isEmpty()) {
        Update u = begin.apply(queue.poll());
        if (u.outcome != null) {
          outcomes.put(u.machine, u.outcome);
        } else {
          active.add(u);
        }
      }
      if (active.isEmpty()) {
        continue;
      }
      Update next = active.stream().min(Comparator.comparingLong(u -> u.dueNanos)).orElseThrow();
      sleepUntil(next.dueNanos);
      poll(next);
      if (next.outcome != null) {
        outcomes.put(next.machine, next.outcome);
        active.remove(next);
      }
    }
  }

  /** One reconcile of the Machine controller: preconditions, UpdateMachine, then act on the answer. */
  private void poll(Update u) {
    GenericKubernetesResource machine = objects.get(CapiResources.MACHINE, u.machine);
    GenericKubernetesResource infra = objects.get(CapiObjects.METAL3_MACHINE, CapiObjects.infraOf(machine));
    GenericKubernetesResource bootstrap = objects.get(objects.bootstrapConfig, CapiObjects.bootstrapOf(machine));
    boolean ready = CapiObjects.annotations(machine).containsKey(Markers.IN_PROGRESS)
        && String.valueOf(CapiObjects.annotations(machine).get(Markers.PENDING_HOOKS)).contains("UpdateMachine")
        && CapiObjects.annotations(infra).containsKey(Markers.IN_PROGRESS)
        && CapiObjects.annotations(bootstrap).containsKey(Markers.IN_PROGRESS)
        && objects.nodeOf(u.machine) != null;
    if (!ready) {
      throw new IllegalStateException("simulator bug: " + u.machine + " is not ready for UpdateMachine");
    }
    ObjectNode desired = JSON.createObjectNode();
    desired.set("machine", CapiObjects.strip(machine));
    desired.set("infrastructureMachine", CapiObjects.strip(infra));
    desired.set("bootstrapConfig", CapiObjects.strip(bootstrap));
    ObjectNode request = JSON.createObjectNode();
    request.set("settings", JSON.valueToTree(settings));
    request.set("desired", desired);
    JsonNode answer;
    try {
      answer = hooks.call("UpdateMachine", request);
    } catch (RuntimeException e) {
      answer = JSON.createObjectNode().put("status", "Failure").put("message", e.getMessage());
    }
    String message = answer.path("message").asText();
    if (!message.equals(u.lastMessage)) {
      say.accept("UpdateMachine " + u.machine + ": " + answer.path("status").asText()
          + (answer.has("retryAfterSeconds") ? " retryAfterSeconds=" + answer.path("retryAfterSeconds").asInt() : "")
          + " " + shorten(message));
      u.lastMessage = message;
    }
    if ("Success".equals(answer.path("status").asText())) {
      u.failures = 0;
      int retry = answer.path("retryAfterSeconds").asInt(0);
      if (retry > 0) {
        u.dueNanos = System.nanoTime() + retry * 1_000_000_000L;
        return;
      }
      complete(machine, infra, bootstrap);
      u.outcome = new UpdateOutcome(u.machine, objects.nodeOf(u.machine), true, true, message);
      return;
    }
    // Failure: a reconcile error; controller-runtime retries with backoff. The simulated operator stops after a few.
    u.failures++;
    if (u.failures >= GIVE_UP_AFTER_FAILURES) {
      u.outcome = new UpdateOutcome(u.machine, objects.nodeOf(u.machine), false, true, message);
      return;
    }
    u.dueNanos = System.nanoTime() + (1_000_000_000L << (u.failures - 1));
  }

  /** completeInPlaceUpdate: the markers come off; the Machine status mirrors the Node. */
  private void complete(GenericKubernetesResource machine, GenericKubernetesResource infra, GenericKubernetesResource bootstrap) {
    objects.annotate(CapiObjects.METAL3_MACHINE, infra.getMetadata().getName(), Map.of(), List.of(Markers.IN_PROGRESS));
    objects.annotate(objects.bootstrapConfig, bootstrap.getMetadata().getName(), Map.of(), List.of(Markers.IN_PROGRESS));
    objects.annotate(CapiResources.MACHINE, machine.getMetadata().getName(), Map.of(),
        List.of(Markers.IN_PROGRESS, Markers.PENDING_HOOKS));
    Node node = workload.nodes().withName(objects.nodeOf(machine.getMetadata().getName())).get();
    String kubelet = node.getStatus().getNodeInfo().getKubeletVersion();
    objects.management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(objects.namespace)
        .withName(machine.getMetadata().getName())
        .editStatus(m -> {
          Map<String, Object> status = new LinkedHashMap<>(CapiObjects.map(m.getAdditionalProperties().get("status")));
          Map<String, Object> nodeInfo = new LinkedHashMap<>(CapiObjects.map(status.get("nodeInfo")));
          nodeInfo.put("kubeletVersion", kubelet);
          status.put("nodeInfo", nodeInfo);
          m.setAdditionalProperty("status", status);
          return m;
        });
  }

  private static String shorten(String text) {
    return text.length() > 180 ? text.substring(0, 180) + "..." : text;
  }

  private static void sleepUntil(long nanos) {
    long wait = nanos - System.nanoTime();
    if (wait > 0) {
      try {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
  }
}
