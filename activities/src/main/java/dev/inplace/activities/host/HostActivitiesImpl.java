package dev.inplace.activities.host;

import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.capi.HostAuthority;
import dev.inplace.activities.support.StepHeartbeat;
import dev.inplace.activities.ssh.HostConnection;
import dev.inplace.activities.ssh.ScriptDeadline;
import dev.inplace.activities.ssh.ScriptOutput;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostPaths;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.activity.Activity;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Host steps over SSH, for each distribution it is given a {@link HostDistribution} strategy for:
 * every request names its distribution and gets that one's scripts. Every step is a rendered script that observes before it
 * acts, so each method can run again after a crash or a retry and finish the job or report it done.
 * Before it reads a Secret or connects, each step has {@link HostAuthority} confirm the host, SSH
 * settings and layout its request names against the management cluster, and then uses what was
 * confirmed (issue 34, H4: a workflow input is not authority).
 */
public final class HostActivitiesImpl implements HostActivities {
  private static final Logger log = LoggerFactory.getLogger(HostActivitiesImpl.class);
  private static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(1);
  /** How often a host step beats while its scripts run (the SDK sends at most one per 0.8 x timeout). */
  private static final Duration STEP_HEARTBEAT_INTERVAL = Duration.ofSeconds(2);
  private static final Duration MIN_MARGIN = Duration.ofSeconds(5);
  private static final Duration MAX_MARGIN = Duration.ofSeconds(60);
  private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern SERVICE = Pattern.compile("[A-Za-z0-9@._-]+");
  private static final Pattern SAFE_PATH = Pattern.compile("/[A-Za-z0-9._+/@-]*");
  private static final Pattern VERSION = Pattern.compile("v[0-9A-Za-z.+-]+");
  private static final Pattern SNAPSHOT_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._+-]{0,99}");

  private final SshConnector ssh;
  private final HostAuthority authority;
  private final ArtifactCache cache;
  private final KairosReboot reboots;
  private final Map<Distribution, HostDistribution> distributions = new EnumMap<>(Distribution.class);
  private final Map<Distribution, HostScripts> scripts = new EnumMap<>(Distribution.class);

  /** Host steps for one distribution only. */
  public HostActivitiesImpl(
      SshConnector ssh, HostAuthority authority, ArtifactCache cache, HostDistribution distribution) {
    this(ssh, authority, cache, List.of(distribution));
  }

  /** Host steps for each of {@code distributions} (at most one strategy per distribution). */
  public HostActivitiesImpl(
      SshConnector ssh, HostAuthority authority, ArtifactCache cache, List<HostDistribution> distributions) {
    this.ssh = ssh;
    this.authority = java.util.Objects.requireNonNull(authority, "authority");
    this.cache = cache;
    this.reboots = new KairosReboot(ssh);
    for (HostDistribution d : distributions) {
      if (this.distributions.put(d.distribution(), d) != null) {
        throw new IllegalArgumentException("two host strategies for " + d.distribution());
      }
      scripts.put(d.distribution(), new HostScripts(d));
    }
  }

  /** The strategy for a request's distribution; null (requests from before the field) means K3S. */
  private HostDistribution strategy(Distribution requested) {
    Distribution wanted = requested == null ? Distribution.K3S : requested;
    HostDistribution d = distributions.get(wanted);
    if (d == null) {
      throw invalid("host steps for " + wanted + " are not supported by this worker (only "
          + distributions.keySet() + ")");
    }
    return d;
  }

  private HostScripts scripts(Distribution requested) {
    return scripts.get(strategy(requested).distribution());
  }

  /**
   * The scripts for a step that uses the host profile's directories, once they are on the allowlist
   * ({@link HostPaths}): an activity re-checks what a workflow input says before it touches a host.
   */
  private HostScripts scripts(Distribution requested, HostProfile profile) {
    HostDistribution d = strategy(requested);
    if (profile == null) {
      throw invalid("profile is required");
    }
    HostPaths.problem(d.distribution(), profile).ifPresent(why -> {
      throw invalid("refusing the host profile: " + why);
    });
    return scripts.get(d.distribution());
  }

  @Override
  public HostFacts inspectHost(HostInspectRequest request) {
    HostScripts scripts = scripts(request.distribution(), request.profile());
    requireUniqueNames(request.artifacts());
    String service = request.profile().serviceFor(request.role());
    return onHost(
        confirmed(request.host(), request.distribution(), request.profile()),
        conn -> {
          ScriptOutput out =
              conn.run(
                  scripts.inspect(request.profile(), service, request.artifacts()),
                  UpgradeFailures.PREFLIGHT_FAILED);
          HostFacts facts = InspectOutput.parse(out, request.artifacts());
          log.info(
              "preflight: arch={} stagingFreeBytes={} version={} {} active={}",
              facts.arch(),
              facts.stagingFreeBytes(),
              facts.installedVersion(),
              service,
              facts.serviceActive());
          return facts;
        });
  }

  @Override
  public StageResult stageArtifacts(StageRequest request) {
    HostScripts scripts = scripts(request.distribution(), request.profile());
    requireUniqueNames(request.artifacts());
    StageHeartbeat heartbeat =
        new StageHeartbeat(Activity.getExecutionContext(), HEARTBEAT_INTERVAL, System::nanoTime);
    Set<String> doneBefore = new HashSet<>(heartbeat.resume().done());
    HostProfile profile = request.profile();
    return onHost(
        confirmed(request.host(), request.distribution(), profile),
        heartbeat::progress,
        conn -> {
          List<String> alreadyPresent = new ArrayList<>();
          List<Artifact> toCheck = new ArrayList<>();
          for (Artifact a : request.artifacts()) {
            if (ArtifactRules.pulledByHost(a)) {
              alreadyPresent.add(a.name()); // the host pulls it by digest at install (Kairos oci:)
              continue;
            }
            if (doneBefore.contains(a.name())) {
              alreadyPresent.add(a.name()); // staged and verified by an earlier attempt
            } else {
              toCheck.add(a);
            }
          }
          // The staging scripts only hash and rename: each gets a script's bound (the connector's
          // command timeout), not the half hour the uploads have, so a hung one is cut and the step
          // retried within minutes (found by the chaos campaign, docs/reliability.md).
          Duration scriptCap = ssh.options().commandTimeout();
          ScriptOutput observed =
              conn.run(
                  scripts.stagePrepare(profile, toCheck),
                  UpgradeFailures.REMOTE_COMMAND_FAILED,
                  scriptCap);
          Set<String> present = new HashSet<>(observed.values("staged"));
          present.addAll(observed.values("installed"));
          Map<String, PartialUpload.Partial> partials =
              PartialUpload.parse(observed.values("partial"));
          List<String> uploaded = new ArrayList<>();
          for (Artifact a : toCheck) {
            if (present.contains(a.name())) {
              alreadyPresent.add(a.name());
              heartbeat.finished(a.name(), 0);
              continue;
            }
            Path local = cache.fetch(a);
            long offset = PartialUpload.resumeOffset(local, partials.get(a.name()));
            if (offset > 0) {
              log.info("stage: resuming {} at byte {}", a.name(), offset);
            }
            long sent =
                conn.upload(local, HostScripts.partPath(profile, a), offset, heartbeat::uploading);
            conn.run(
                scripts.stageCommit(profile, List.of(a)),
                UpgradeFailures.ARTIFACT_DIGEST_MISMATCH,
                scriptCap);
            uploaded.add(a.name());
            heartbeat.finished(a.name(), sent);
          }
          log.info(
              "stage: uploaded={} alreadyPresent={} bytesSent={}",
              uploaded,
              alreadyPresent,
              heartbeat.bytesSent());
          return new StageResult(uploaded, alreadyPresent, heartbeat.bytesSent());
        });
  }

  @Override
  public BackupResult backupBinaries(BackupRequest request) {
    // Files that did not exist before the run have nothing to back up; restore removes them.
    List<InstalledFile> existing =
        request.current().stream().filter(f -> f.sha256() != null).toList();
    HostScripts scripts = scripts(request.distribution(), request.profile());
    requireValidFiles(existing);
    requireUniqueBasenames(existing);
    return onHost(
        confirmed(request.host(), request.distribution(), request.profile()),
        conn -> {
          ScriptOutput out =
              conn.run(scripts.backup(request.profile(), existing), UpgradeFailures.BACKUP_FAILED);
          BackupResult result =
              new BackupResult(out.values("backed_up"), out.values("already_backed_up"));
          log.info(
              "backup: backedUp={} alreadyBackedUp={}",
              result.backedUp(),
              result.alreadyBackedUp());
          return result;
        });
  }

  @Override
  public InstallResult installArtifacts(InstallRequest request) {
    HostScripts scripts = scripts(request.distribution(), request.profile());
    requireUniqueNames(request.artifacts());
    return onHost(
        confirmed(request.host(), request.distribution(), request.profile()),
        conn -> {
          ScriptOutput out =
              conn.run(
                  scripts.install(request.profile(), request.artifacts()),
                  UpgradeFailures.INSTALL_FAILED);
          InstallResult result =
              new InstallResult(out.values("installed"), out.values("already_installed"));
          log.info(
              "install: installed={} alreadyInstalled={} imported={}",
              result.installed(),
              result.alreadyInstalled(),
              out.values("imported"));
          return result;
        });
  }

  @Override
  public UpgradeCommandResult runUpgradeCommand(UpgradeCommandRequest request) {
    HostDistribution distribution = strategy(request.distribution());
    if (!distribution.hasUpgradeCommand()) {
      throw invalid(distribution.distribution() + " has no upgrade command; nothing to run");
    }
    if (request.role() == null || request.profile() == null) {
      throw invalid("role and profile are required");
    }
    if (request.targetVersion() == null || !KubeVersion.isValid(request.targetVersion())
        || !VERSION.matcher(request.targetVersion()).matches()) {
      throw invalid("targetVersion must be a version like v1.31.2, got '" + request.targetVersion() + "'");
    }
    HostScripts scripts = scripts(request.distribution(), request.profile());
    return onHost(
        confirmed(request.host(), request.distribution(), request.profile()),
        conn -> {
          ScriptOutput out =
              conn.run(
                  scripts.upgrade(
                      request.profile(), request.role(), request.targetVersion(), request.firstControlPlane()),
                  UpgradeFailures.KUBEADM_UPGRADE_FAILED);
          String backup = out.value("backup_dir");
          UpgradeCommandResult result =
              new UpgradeCommandResult(
                  out.value("command"), "true".equals(out.value("already_upgraded")), backup == null ? "" : backup);
          log.info(
              "upgrade: {} alreadyUpgraded={} backup={}",
              result.command(),
              result.alreadyUpgraded(),
              result.backupDir());
          return result;
        });
  }

  @Override
  public ServiceResult restartService(ServiceRequest request) {
    HostScripts scripts = scripts(request.distribution());
    if (request.service() == null || !SERVICE.matcher(request.service()).matches()) {
      throw invalid("service must be a systemd unit name, got '" + request.service() + "'");
    }
    HostAccess host = authority.confirmService(request.host(), strategy(request.distribution()).distribution(),
        request.service());
    ScriptDeadline budget = ScriptDeadline.after(scriptBudget());
    Optional<RebootProgress> resumed = rebootInProgress();
    if (resumed.isPresent()) {
      // An earlier attempt rebooted this host (its worker may have crashed meanwhile): wait for it.
      log.info("restart: {} resuming the wait for the reboot from boot {}", host.nodeName(),
          resumed.get().fromBoot());
      return withNode(host, () -> reboots.awaitReturn(host, scripts, request.service(),
          resumed.get().fromBoot(), budget, HostActivitiesImpl::heartbeat));
    }
    ScriptOutput out =
        onHost(host, conn -> conn.run(scripts.restart(request.service()), UpgradeFailures.SERVICE_RESTART_FAILED));
    if (KairosReboot.pending(out)) {
      // A Kairos OS image (or its rollback) waits for a reboot: reboot instead of restarting.
      return withNode(host, () -> reboots.reboot(host, scripts, request.service(), out, budget,
          HostActivitiesImpl::heartbeat));
    }
    boolean active = "true".equals(out.value("service_active"));
    withNode(host, () -> {
      log.info("restart: service={} active={}", request.service(), active);
      return null;
    });
    return new ServiceResult(request.service(), active);
  }

  @Override
  public RestoreResult restoreBinaries(RestoreRequest request) {
    HostScripts scripts = scripts(request.distribution(), request.profile());
    requireValidFiles(request.previous());
    requireUniqueBasenames(request.previous().stream().filter(f -> f.sha256() != null).toList());
    return onHost(
        confirmed(request.host(), request.distribution(), request.profile()),
        conn -> {
          ScriptOutput out =
              conn.run(
                  scripts.restore(request.profile(), request.previous()),
                  UpgradeFailures.ROLLBACK_FAILED);
          List<String> restored = out.values("restored");
          List<String> removed = out.values("removed");
          RestoreResult result =
              new RestoreResult(restored, removed, !restored.isEmpty() || !removed.isEmpty());
          log.info(
              "restore: restored={} removed={} changed={}",
              result.restored(),
              result.removed(),
              result.changed());
          return result;
        });
  }

  @Override
  public EtcdSnapshotResult snapshotEtcd(EtcdSnapshotRequest request) {
    HostDistribution distribution = strategy(request.distribution());
    if (distribution.etcdSnapshotDir() == null) {
      throw invalid("etcd snapshots for " + distribution.distribution() + " are not supported");
    }
    HostScripts scripts = scripts(request.distribution(), request.profile());
    if (request.name() == null || !SNAPSHOT_NAME.matcher(request.name()).matches()) {
      throw invalid(
          "snapshot name must be 1-100 characters of [A-Za-z0-9._+-] starting with a letter or"
              + " digit, got '"
              + request.name()
              + "'");
    }
    HostAccess host = confirmed(request.host(), request.distribution(), request.profile());
    return onHost(
        host,
        conn -> {
          ScriptOutput out =
              conn.run(
                  scripts.etcdSnapshot(request.profile(), request.name()),
                  UpgradeFailures.ETCD_SNAPSHOT_FAILED);
          String location = out.value("snapshot");
          if (location == null || location.isBlank()) {
            throw UpgradeFailures.nonRetryable(
                UpgradeFailures.ETCD_SNAPSHOT_FAILED,
                "etcd snapshot "
                    + request.name()
                    + " on "
                    + host.nodeName()
                    + ": the snapshot script reported no file");
          }
          EtcdSnapshotResult result =
              new EtcdSnapshotResult(
                  request.name(), location, "true".equals(out.value("already_taken")));
          log.info(
              "snapshot: {} at {} (alreadyTaken={}, datastore={})",
              result.name(),
              result.location(),
              result.alreadyTaken(),
              out.value("datastore") == null ? "not observed" : out.value("datastore"));
          return result;
        });
  }

  @Override
  public ArtifactCheckResult verifyArtifacts(ArtifactCheckRequest request) {
    if (request.artifacts() == null) {
      throw invalid("artifacts are required");
    }
    requireUniqueNames(request.artifacts());
    List<String> verified = new ArrayList<>();
    try (StepHeartbeat beating = stepHeartbeat(() -> "artifacts " + verified)) {
      for (Artifact a : request.artifacts()) {
        if (ArtifactRules.pulledByHost(a)) {
          continue; // pinned by digest in its oci: reference; the host's registry pull checks it
        }
        cache.fetch(a); // verifies the sha256 (and size) or fails with the vocabulary's type
        verified.add(a.name());
      }
    }
    log.info("artifacts verified in the worker cache: {}", verified);
    return new ArtifactCheckResult(verified);
  }

  /** The host a request names, as the management cluster confirms it ({@link HostAuthority}). */
  private HostAccess confirmed(HostAccess asked, Distribution requested, HostProfile profile) {
    return authority.confirm(asked, strategy(requested).distribution(), profile);
  }

  /**
   * Runs {@code work} on a fresh connection, with the node in the logging context; its scripts are
   * bounded by this activity's own budget.
   */
  private <T> T onHost(HostAccess host, Function<HostConnection, T> work) {
    return onHost(host, () -> "host step on " + host.nodeName(), work);
  }

  /**
   * As {@link #onHost(HostAccess, Function)}, heartbeating {@code details} from a side thread while
   * the work runs (see {@link StepHeartbeat}).
   */
  private <T> T onHost(HostAccess host, java.util.function.Supplier<?> details, Function<HostConnection, T> work) {
    try (StepHeartbeat beating = stepHeartbeat(details)) {
      return onHostBeating(host, work);
    }
  }

  private static StepHeartbeat stepHeartbeat(java.util.function.Supplier<?> details) {
    io.temporal.activity.ActivityExecutionContext context;
    try {
      context = Activity.getExecutionContext();
    } catch (IllegalStateException | NullPointerException notInAnActivity) {
      return StepHeartbeat.none();
    }
    return StepHeartbeat.start(context, STEP_HEARTBEAT_INTERVAL, details);
  }

  private <T> T onHostBeating(HostAccess host, Function<HostConnection, T> work) {
    ScriptDeadline deadline = ScriptDeadline.after(scriptBudget());
    String previousCluster = MDC.get("cluster");
    String previousNode = MDC.get("node");
    MDC.put("cluster", host.clusterForLogs()); // NS/NAME, as everywhere else in the logs
    MDC.put("node", host.nodeName());
    try (HostConnection conn = ssh.open(host, deadline)) {
      return work.apply(conn);
    } finally {
      restore("cluster", previousCluster);
      restore("node", previousNode);
    }
  }

  /** Runs {@code work} with the node in the logging context. */
  private static <T> T withNode(HostAccess host, Supplier<T> work) {
    String previousCluster = MDC.get("cluster");
    String previousNode = MDC.get("node");
    MDC.put("cluster", host.clusterForLogs());
    MDC.put("node", host.nodeName());
    try {
      return work.get();
    } finally {
      restore("cluster", previousCluster);
      restore("node", previousNode);
    }
  }

  /** Records progress of a reboot (outside an activity, tests: logged only). */
  private static void heartbeat(RebootProgress progress) {
    log.info("restart: {} (from boot {})", progress.note(), progress.fromBoot());
    try {
      Activity.getExecutionContext().heartbeat(progress);
    } catch (IllegalStateException | NullPointerException notInAnActivity) {
      // unit tests call the implementation directly
    }
  }

  /** The reboot an earlier attempt of this restart step heartbeated, if any. */
  private static Optional<RebootProgress> rebootInProgress() {
    try {
      return Activity.getExecutionContext().getHeartbeatDetails(RebootProgress.class)
          .filter(p -> p.fromBoot() != null);
    } catch (io.temporal.common.converter.DataConverterException scriptHeartbeat) {
      // The earlier attempt died while its restart script ran: its last heartbeat is the step's
      // progress line (StepHeartbeat), not a reboot, so there is no reboot to wait for.
      return Optional.empty();
    } catch (IllegalStateException | NullPointerException notInAnActivity) {
      return Optional.empty();
    }
  }

  /** This activity's start-to-close timeout less a margin, or the connector's default outside one. */
  private Duration scriptBudget() {
    Duration startToClose;
    try {
      startToClose = Activity.getExecutionContext().getInfo().getStartToCloseTimeout();
    } catch (IllegalStateException | NullPointerException notInAnActivity) {
      startToClose = null;
    }
    return scriptBudget(startToClose, ssh.options().commandTimeout());
  }

  /**
   * The scripts' share of an activity's start-to-close timeout: all of it but a margin (a tenth,
   * between 5 and 60 seconds), so a script that overruns fails with the step's own failure type
   * before Temporal times the attempt out.
   */
  static Duration scriptBudget(Duration startToClose, Duration fallback) {
    if (startToClose == null || startToClose.isZero() || startToClose.isNegative()) {
      return fallback;
    }
    Duration margin = startToClose.dividedBy(10);
    if (margin.compareTo(MIN_MARGIN) < 0) {
      margin = MIN_MARGIN;
    } else if (margin.compareTo(MAX_MARGIN) > 0) {
      margin = MAX_MARGIN;
    }
    Duration budget = startToClose.minus(margin);
    return budget.compareTo(MIN_MARGIN) < 0 ? startToClose.dividedBy(2) : budget;
  }

  private static void restore(String key, String value) {
    if (value == null) {
      MDC.remove(key);
    } else {
      MDC.put(key, value);
    }
  }

  private static void requireUniqueNames(List<Artifact> artifacts) {
    Set<String> names = new HashSet<>();
    for (Artifact a : artifacts) {
      if (!names.add(a.name())) {
        throw invalid("artifact name '" + a.name() + "' appears twice");
      }
    }
  }

  private static void requireValidFiles(List<InstalledFile> files) {
    for (InstalledFile f : files) {
      if (f.path() == null
          || !SAFE_PATH.matcher(f.path()).matches()
          || f.path().contains("/../")
          || f.path().endsWith("/..")) {
        throw invalid(
            "file path must be absolute and of [A-Za-z0-9._+/@-], got '" + f.path() + "'");
      }
      if (f.sha256() != null && !SHA256.matcher(f.sha256()).matches()) {
        throw invalid("sha256 of " + f.path() + " must be 64 lower-case hex characters");
      }
    }
  }

  /** Backups are kept as {@code <basename>.prev}, so two files must not share a name. */
  private static void requireUniqueBasenames(List<InstalledFile> files) {
    Set<String> names = new HashSet<>();
    for (InstalledFile f : files) {
      String name = f.path().substring(f.path().lastIndexOf('/') + 1);
      if (!names.add(name)) {
        throw invalid("two files named '" + name + "' cannot be backed up side by side");
      }
    }
  }

  private static RuntimeException invalid(String message) {
    return UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, message);
  }
}
