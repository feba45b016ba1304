package dev.inplace.worker.watch;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.RunRecord;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradePlan;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.client.WorkflowExecutionDescription;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * What the watcher does for one CR, each time it looks at it (called from one thread only):
 *
 * <ul>
 *   <li>new: check and resolve it (a refusal gets Failed with its reason, nothing touched); dryRun
 *       plans; otherwise add the finalizer, freeze the spec and start the run(s) under IDs derived
 *       from the CR;
 *   <li>started: refuse spec changes other than {@code paused}, carry {@code paused} to the runs
 *       (pause/resume Updates), and mirror their progress into the status, with Events;
 *   <li>deleted: send {@code abort} (cancel only after the grace period), mirror until every run
 *       has ended, then remove the finalizer.
 * </ul>
 */
final class Reconciler {
  private static final Logger log = LoggerFactory.getLogger(Reconciler.class);
  private static final Set<RunPhase> NO_PAUSE =
      Set.of(RunPhase.ABORTING, RunPhase.RECORDING, RunPhase.SUCCEEDED, RunPhase.FAILED, RunPhase.ABORTED);

  private final KubernetesClient client;
  private final SpecResolver resolver;
  private final RunStarter starter;
  private final RunObserver observer;
  private final StatusWriter writer;
  private final UpgradeEvents events;
  private final WatcherOptions options;
  private final Clock clock;
  /** When each CR (by uid) was last mirrored, and at which generation. */
  private final Map<String, Instant> mirroredAt = new HashMap<>();
  private final Map<String, Long> mirroredGeneration = new HashMap<>();
  /** Runs told to abort because their CR is being deleted. */
  private final Map<String, Instant> abortSent = new HashMap<>();

  Reconciler(
      KubernetesClient client,
      SpecResolver resolver,
      RunStarter starter,
      RunObserver observer,
      StatusWriter writer,
      UpgradeEvents events,
      WatcherOptions options,
      Clock clock) {
    this.client = client;
    this.resolver = resolver;
    this.starter = starter;
    this.observer = observer;
    this.writer = writer;
    this.events = events;
    this.options = options;
    this.clock = clock;
  }

  /**
   * Looks at a CR once.
   *
   * @param tick true when called by the status timer (mirrors even if mirrored moments ago)
   * @throws TransientProblem (and other runtime exceptions) to be tried again later
   */
  void reconcile(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> seen, boolean tick) {
    CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr = writer.read(seen);
    if (cr == null) {
      forget(seen.getMetadata().getUid());
      return;
    }
    String clusterName = cr.getSpec() == null ? "" : Objects.toString(cr.getSpec().getClusterName(), "");
    MDC.put("cluster", cr.getMetadata().getNamespace() + "/" + clusterName);
    try {
      if (cr.getMetadata().getDeletionTimestamp() != null) {
        deleting(cr);
      } else if (cr.getStatus() != null && cr.getStatus().started()) {
        mirror(cr, tick);
      } else if (!adopted(cr)) {
        begin(cr);
      }
    } finally {
      MDC.remove("cluster");
    }
  }

  /** Whether the timer should look at this CR: anything not yet settled. */
  static boolean needsAttention(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr) {
    if (cr.getMetadata().getDeletionTimestamp() != null) {
      return cr.getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER);
    }
    UpgradeStatus s = cr.getStatus();
    if (s == null || s.getPhase() == null || !Objects.equals(s.getObservedGeneration(), cr.getMetadata().getGeneration())) {
      return true;
    }
    return switch (s.getPhase()) {
      case PENDING, WAITING, RUNNING, PAUSED, HALTED, ABORTING -> true;
      default -> false;
    };
  }

  // ---- a CR without runs ------------------------------------------------------------------------

  private void begin(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr) {
    UpgradeStatus status = cr.getStatus();
    long generation = generation(cr);
    if (status != null && Objects.equals(status.getObservedGeneration(), generation)
        && (status.getPhase() == UpgradePhase.FAILED || status.getPhase() == UpgradePhase.PLANNED)) {
      return; // decided for this spec; a new generation is looked at again
    }
    UpgradeSpec<?> spec = cr.getSpec();
    StatusBuilder build = builder(cr);
    if (cr instanceof WorkersUpgrade && status != null && status.getPhase() == UpgradePhase.WAITING
        && Objects.equals(status.getObservedGeneration(), generation)) {
      // Judged for this spec already and waiting: while the ControlPlaneUpgrade still runs, read only
      // that. Resolving again read the cluster, its pools, Machines and Secrets (a dozen requests) on
      // every status tick for as long as the control plane took. The whole spec is judged again once
      // the ControlPlaneUpgrade has ended.
      Optional<String> controlPlaneRunning = controlPlaneStillRunning(cr, spec);
      if (controlPlaneRunning.isPresent()) {
        write(cr, previous -> build.waiting(previous, controlPlaneRunning.get()));
        return;
      }
    }
    ResolvedUpgrade resolved;
    try {
      resolved = resolver.resolve(cr.getMetadata().getNamespace(), spec);
      if (spec.dryRun()) {
        UpgradePlan plan = DryRunPlanner.plan(resolved, cr instanceof ControlPlaneUpgrade, clock.millis());
        write(cr, previous -> build.planned(previous, plan));
        return;
      }
      // A ControlPlaneUpgrade still running for this cluster and version is always waited for, even
      // once the nodes report the target: its last node is not uncordoned and recorded yet.
      Optional<String> controlPlaneRunning = controlPlaneStillRunning(cr, spec);
      if (cr instanceof WorkersUpgrade && controlPlaneRunning.isPresent()) {
        write(cr, previous -> build.waiting(previous, controlPlaneRunning.get()));
        return;
      }
      if (cr instanceof WorkersUpgrade && !resolved.controlPlaneAtTarget()) {
        Optional<String> waitingFor = controlPlaneInProgress(cr, spec);
        if (waitingFor.isPresent()) {
          write(cr, previous -> build.waiting(previous, waitingFor.get()));
          return;
        }
        throw new SpecRefusal(UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
            "the control plane of " + resolved.cluster() + " does not run " + spec.getVersion()
                + " and no ControlPlaneUpgrade in progress brings it there; upgrade the control plane first"
                + " (a kubelet must never be newer than the apiserver)");
      }
      refuseConflicts(cr, resolved);
    } catch (SpecRefusal refusal) {
      log.warn("{} {}/{} refused ({}): {}", cr.getKind(), cr.getMetadata().getNamespace(), cr.getMetadata().getName(),
          refusal.reason(), refusal.getMessage());
      write(cr, previous -> build.refused(previous, refusal));
      return;
    } catch (TransientProblem problem) {
      write(cr, previous -> build.pending(previous, problem.getMessage() + "; trying again"));
      throw problem;
    }

    if (!writer.addFinalizer(cr)) {
      return; // gone, or deleted meanwhile
    }
    String hash = SpecHash.of(spec);
    long frozen = generation;
    int started = starter.start(cr, resolved, hash);
    List<RunRecord> runs = RunStarter.runsOf(cr, resolved.pools());
    // Attached to runs started before (all of them after a restart between start and status, or some
    // after a start cut off between pools): their memo holds what they started from, and the spec
    // they keep. A run started by this call has the current values in its memo anyway.
    boolean attached = started < runs.size();
    Optional<WorkflowExecutionDescription> older = Optional.empty();
    for (RunRecord run : runs) {
      Optional<WorkflowExecutionDescription> before = attached ? observer.describe(run.getWorkflowId()) : Optional.empty();
      String remembered = before.map(d -> memo(d, RunStarter.MEMO_FROM_VERSION, String.class)).orElse(null);
      run.setFromVersion(remembered != null ? remembered : RunStarter.fromVersion(resolved, run.getMachineDeployment()));
      if (older.isEmpty() && before.isPresent()
          && (started == 0 || !hash.equals(memo(before.get(), RunStarter.MEMO_SPEC_HASH, String.class)))) {
        older = before;
      }
    }
    if (older.isPresent()) {
      hash = Objects.requireNonNullElse(memo(older.get(), RunStarter.MEMO_SPEC_HASH, String.class), hash);
      Long memoGeneration = memo(older.get(), RunStarter.MEMO_GENERATION, Long.class);
      frozen = memoGeneration == null ? frozen : memoGeneration;
    }
    String frozenHash = hash;
    long frozenGeneration = frozen;
    String message = "started " + runs.stream().map(RunRecord::getWorkflowId).collect(Collectors.joining(", "));
    List<dev.inplace.workflows.api.MachineInfo> all = resolved.inventory().machines();
    if (all.size() == 1 && cr instanceof ControlPlaneUpgrade) { // a one-Machine cluster has no workers to drain
      log.warn("{} {}/{}: cluster {} has one node ({}): its drain is skipped, there is nowhere to evict to",
          cr.getKind(), cr.getMetadata().getNamespace(), cr.getMetadata().getName(), resolved.cluster(),
          all.get(0).nodeName());
      write(cr, previous -> build.drainSkipped(
          build.started(previous, runs, frozenGeneration, frozenHash, message), previous, all.get(0).nodeName()));
    } else {
      write(cr, previous -> build.started(previous, runs, frozenGeneration, frozenHash, message));
    }
  }

  /**
   * A CR with the finalizer but no runs in its status may have been started just before a crash:
   * if all its runs exist, record them (with the spec they were started with) instead of resolving
   * again. When only some exist (the crash came between two pools' starts), none is adopted: begin()
   * attaches to those there and starts the rest, so no pool is recorded as started without a run.
   */
  private boolean adopted(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr) {
    if (!cr.getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER)) {
      return false;
    }
    List<String> pools = List.of();
    if (cr.getSpec() instanceof WorkersUpgradeSpec w) {
      if (w.getMachineDeployments() == null || w.getMachineDeployments().isEmpty()) {
        return false; // its runs are only known once the cluster is read: begin() attaches to them
      }
      pools = w.getMachineDeployments();
    }
    List<RunRecord> runs = RunStarter.runsOf(cr, pools);
    List<Optional<WorkflowExecutionDescription>> described =
        runs.stream().map(run -> observer.describe(run.getWorkflowId())).toList();
    if (described.stream().anyMatch(Optional::isEmpty)) {
      return false;
    }
    Optional<WorkflowExecutionDescription> first = described.get(0);
    String hash = Objects.requireNonNullElse(memo(first.get(), RunStarter.MEMO_SPEC_HASH, String.class), SpecHash.of(cr.getSpec()));
    Long memoGeneration = memo(first.get(), RunStarter.MEMO_GENERATION, Long.class);
    long frozen = memoGeneration == null ? generation(cr) : memoGeneration;
    for (int i = 0; i < runs.size(); i++) {
      runs.get(i).setFromVersion(memo(described.get(i).get(), RunStarter.MEMO_FROM_VERSION, String.class));
    }
    log.info("{} {}/{}: found its run {} already started", cr.getKind(), cr.getMetadata().getNamespace(),
        cr.getMetadata().getName(), runs.get(0).getWorkflowId());
    StatusBuilder build = builder(cr);
    write(cr, previous -> build.started(previous, runs, frozen, hash, "found " + runs.get(0).getWorkflowId() + " running"));
    return true;
  }

  /** A ControlPlaneUpgrade of the same cluster and version that has not ended, described. */
  private Optional<String> controlPlaneStillRunning(
      CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr, UpgradeSpec<?> spec) {
    if (!(cr instanceof WorkersUpgrade)) {
      return Optional.empty();
    }
    return client.resources(ControlPlaneUpgrade.class).inNamespace(cr.getMetadata().getNamespace()).list().getItems()
        .stream()
        .filter(cp -> cp.getSpec() != null && spec.getClusterName().equals(cp.getSpec().getClusterName())
            && spec.getVersion().equals(cp.getSpec().getVersion()) && !cp.getSpec().dryRun())
        .filter(cp -> cp.getStatus() == null || cp.getStatus().getPhase() == null || !cp.getStatus().getPhase().terminal())
        .findFirst()
        .map(cp -> "waiting for ControlPlaneUpgrade " + cp.getMetadata().getName() + " ("
            + (cp.getStatus() == null || cp.getStatus().getPhase() == null ? "Pending" : Texts.camel(cp.getStatus().getPhase()))
            + ") to bring the control plane to " + spec.getVersion());
  }

  /** The ControlPlaneUpgrade a waiting WorkersUpgrade waits for, described; empty if there is none to wait for. */
  private Optional<String> controlPlaneInProgress(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr, UpgradeSpec<?> spec)
      throws SpecRefusal {
    List<ControlPlaneUpgrade> matching =
        client.resources(ControlPlaneUpgrade.class).inNamespace(cr.getMetadata().getNamespace()).list().getItems().stream()
            .filter(cp -> cp.getSpec() != null && spec.getClusterName().equals(cp.getSpec().getClusterName())
                && spec.getVersion().equals(cp.getSpec().getVersion()) && !cp.getSpec().dryRun())
            .toList();
    for (ControlPlaneUpgrade cp : matching) {
      UpgradePhase phase = cp.getStatus() == null ? null : cp.getStatus().getPhase();
      if (phase == null || !phase.terminal()) {
        return Optional.of("waiting for ControlPlaneUpgrade " + cp.getMetadata().getName() + " ("
            + (phase == null ? "Pending" : Texts.camel(phase)) + ") to bring the control plane to " + spec.getVersion());
      }
      if (phase == UpgradePhase.SUCCEEDED) {
        return Optional.of("ControlPlaneUpgrade " + cp.getMetadata().getName() + " succeeded; waiting for the"
            + " control-plane Machines to report " + spec.getVersion());
      }
    }
    if (!matching.isEmpty()) {
      ControlPlaneUpgrade cp = matching.get(0);
      throw new SpecRefusal(UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
          "the control plane does not run " + spec.getVersion() + ": ControlPlaneUpgrade " + cp.getMetadata().getName()
              + " ended " + Texts.camel(cp.getStatus().getPhase()) + "; workers are not upgraded past their apiserver");
    }
    return Optional.empty();
  }

  /** Another started, unfinished CR of the same kind for the same cluster (and pools) refuses this one. */
  private void refuseConflicts(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr, ResolvedUpgrade resolved)
      throws SpecRefusal {
    List<? extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> others =
        cr instanceof WorkersUpgrade
            ? client.resources(WorkersUpgrade.class).inNamespace(cr.getMetadata().getNamespace()).list().getItems()
            : client.resources(ControlPlaneUpgrade.class).inNamespace(cr.getMetadata().getNamespace()).list().getItems();
    for (CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> other : others) {
      UpgradeStatus s = other.getStatus();
      if (other.getMetadata().getUid().equals(cr.getMetadata().getUid()) || other.getSpec() == null || s == null
          || !s.started() || (s.getPhase() != null && s.getPhase().terminal())
          || !resolved.cluster().name().equals(other.getSpec().getClusterName())) {
        continue;
      }
      List<String> overlap = new ArrayList<>();
      if (cr instanceof WorkersUpgrade && s.getRuns() != null) {
        s.getRuns().stream().map(RunRecord::getMachineDeployment).filter(resolved.pools()::contains).forEach(overlap::add);
        if (overlap.isEmpty()) {
          continue;
        }
      }
      throw new SpecRefusal(Reasons.CONFLICTING_UPGRADE,
          other.getKind() + " " + other.getMetadata().getName() + " is already upgrading cluster " + resolved.cluster()
              + (overlap.isEmpty() ? "" : " (MachineDeployments " + String.join(", ", overlap) + ")")
              + "; wait for it to end or delete it, then create this one again");
    }
  }

  // ---- a CR with runs ---------------------------------------------------------------------------

  private void mirror(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr, boolean tick) {
    String uid = cr.getMetadata().getUid();
    long generation = generation(cr);
    Instant last = mirroredAt.get(uid);
    if (!tick && last != null && Objects.equals(mirroredGeneration.get(uid), generation)
        && Duration.between(last, clock.instant()).compareTo(options.statusInterval()) < 0) {
      return; // mirrored moments ago, and nothing new was asked: the timer comes back soon
    }
    UpgradeStatus status = cr.getStatus();
    boolean accepted = SpecHash.of(cr.getSpec()).equals(status.getSpecHash());
    List<RunObservation> observed = observeAll(status);
    // paused is the one field that may change; it is carried even while another change is refused.
    if (carryPaused(cr, observed)) {
      observed = observeAll(status);
    }
    List<RunObservation> runs = observed;
    StatusBuilder build = builder(cr);
    write(cr, previous -> build.mirrored(previous, runs, accepted, false));
    mirroredAt.put(uid, clock.instant());
    mirroredGeneration.put(uid, generation);
  }

  /** Sends pause or resume to each live run whose state differs from spec.paused; true if any was sent. */
  private boolean carryPaused(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr, List<RunObservation> observed) {
    boolean wanted = cr.getSpec().paused();
    boolean sent = false;
    for (RunObservation o : observed) {
      if (o.closed() || o.progress() == null || NO_PAUSE.contains(o.progress().phase()) || o.progress().paused() == wanted) {
        continue;
      }
      String update = wanted ? "pause" : "resume";
      // One ID per generation: a repeat (restart, second replica) is the same Update, applied once.
      observer.update(o.workflowId(), update, "cr-" + update + "-generation-" + generation(cr));
      sent = true;
    }
    return sent;
  }

  // ---- a CR being deleted -----------------------------------------------------------------------

  private void deleting(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr) {
    if (!cr.getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER)) {
      return;
    }
    UpgradeStatus status = cr.getStatus();
    if (status == null || !status.started()) {
      if (!adopted(cr)) {
        writer.removeFinalizer(cr); // nothing was started
      }
      return; // adopted: its runs are aborted on the next look
    }
    List<RunObservation> observed = observeAll(status);
    Instant now = clock.instant();
    Instant deletedAt = OffsetDateTime.parse(cr.getMetadata().getDeletionTimestamp()).toInstant();
    boolean graceOver = Duration.between(deletedAt, now).compareTo(options.abortGracePeriod()) > 0;
    boolean live = false;
    for (RunObservation o : observed) {
      if (o.closed()) {
        abortSent.remove(o.workflowId());
        continue;
      }
      live = true;
      if (!abortSent.containsKey(o.workflowId())) {
        // Nodes in flight finish (upgraded, or rolled back on failure); no new node starts.
        if (observer.update(o.workflowId(), "abort", "cr-deleted-abort")) {
          abortSent.put(o.workflowId(), now);
        }
      } else if (graceOver) {
        // Only when abort did not end the run in time: cancellation rolls the nodes in flight back.
        observer.cancel(o.workflowId());
      }
    }
    StatusBuilder build = builder(cr);
    boolean accepted = SpecHash.of(cr.getSpec()).equals(status.getSpecHash());
    if (live) {
      write(cr, previous -> build.mirrored(previous, observed, accepted, true));
      return;
    }
    write(cr, previous -> build.mirrored(previous, observed, accepted, false));
    if (writer.removeFinalizer(cr)) {
      log.info("{} {}/{}: every run has ended; finalizer removed", cr.getKind(), cr.getMetadata().getNamespace(),
          cr.getMetadata().getName());
    }
    forget(cr.getMetadata().getUid());
  }

  // ---- shared -----------------------------------------------------------------------------------

  private List<RunObservation> observeAll(UpgradeStatus status) {
    List<RunObservation> observed = new ArrayList<>();
    List<RunRecord> runs = status.getRuns();
    if (runs == null || runs.isEmpty()) {
      runs = status.getWorkflowIds().stream().map(id -> new RunRecord(id, null)).toList();
    }
    for (RunRecord run : runs) {
      observed.add(observer.observe(run.getWorkflowId(), run.getMachineDeployment()));
    }
    return observed;
  }

  /** Writes the status and records the Events its change is worth. */
  private void write(
      CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr, java.util.function.UnaryOperator<UpgradeStatus> next) {
    // cr is this reconcile's own read (reconcile(...)): the write starts from it, not from a second GET.
    StatusWriter.Written written = writer.writeStatusFrom(cr, next);
    if (written == null || !written.changed()) {
      return;
    }
    for (EventDiff.Event event : EventDiff.between(written.before(), written.after())) {
      events.record(cr, event);
    }
  }

  private StatusBuilder builder(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr) {
    return new StatusBuilder(generation(cr), Texts.time(clock.instant()), cr.getSpec() == null ? null : cr.getSpec().getVersion());
  }

  private static long generation(CustomResource<?, ?> cr) {
    return cr.getMetadata().getGeneration() == null ? 0 : cr.getMetadata().getGeneration();
  }

  private static <T> T memo(WorkflowExecutionDescription description, String key, Class<T> type) {
    try {
      return type.cast(description.getMemo(key, type));
    } catch (RuntimeException e) {
      return null;
    }
  }

  private void forget(String uid) {
    mirroredAt.remove(uid);
    mirroredGeneration.remove(uid);
  }
}
