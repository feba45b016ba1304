package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.MaxUnavailable;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.SshSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The options both {@code upgrade} subcommands share: what to install, how to reach the hosts, how
 * to drain, and when nodes may start. Turns them into the frozen run template.
 */
final class UpgradeOptions {
  @Spec(Spec.Target.MIXEE)
  CommandSpec spec;

  @picocli.CommandLine.Mixin InplaceCli.HelpOption help;

  @Option(names = "--cluster", required = true, paramLabel = "NS/NAME", converter = Converters.Cluster.class,
      description = "The CAPI Cluster, namespace/name.")
  ClusterRef cluster;

  @Option(names = "--version", required = true, paramLabel = "V", description = "The target version, e.g. v1.31.2+k3s1.")
  String version;

  @Option(names = "--catalogue", required = true, paramLabel = "FILE",
      description = "Release catalogue JSON: the artifacts and digests are resolved now and frozen into the run.")
  Path catalogue;

  @Option(names = "--distribution", paramLabel = "D", defaultValue = "k3s", converter = Converters.DistributionName.class,
      completionCandidates = Converters.Distributions.class,
      description = "One of: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}); selects the host layout and the steps.")
  Distribution distribution;

  @Option(names = "--os", paramLabel = "OS", defaultValue = "standard",
      description = "The hosts' operating system: standard (default) or kairos (the release is an OS image written"
          + " with kairos-agent upgrade; the host reboots into it; docs/kairos.md).")
  String os;

  @Option(names = "--arch", paramLabel = "ARCH", defaultValue = "amd64", description = "Node architecture (default ${DEFAULT-VALUE}).")
  String arch;

  @Option(names = "--ssh-user", required = true, paramLabel = "USER", description = "SSH user on the hosts.")
  String sshUser;

  @Option(names = "--ssh-port", paramLabel = "PORT", defaultValue = "22", converter = Converters.Count.class,
      description = "SSH port (default ${DEFAULT-VALUE}).")
  int sshPort;

  @Option(names = "--ssh-key-secret", required = true, paramLabel = "SECRET",
      description = "Secret (in the cluster's namespace) holding the SSH private key; the key never leaves the worker.")
  String sshKeySecret;

  @Option(names = "--known-hosts-secret", required = true, paramLabel = "SECRET",
      description = "Secret holding the pinned host keys (known_hosts).")
  String knownHostsSecret;

  @Option(names = "--jump-host", paramLabel = "HOST[:PORT]", description = "SSH jump host.")
  String jumpHost;

  @Option(names = "--drain-timeout", paramLabel = "DURATION", defaultValue = "300", converter = Converters.Seconds.class,
      description = "How long evictions may be refused (seconds, or 5m, 1h; default ${DEFAULT-VALUE} s).")
  long drainTimeout;

  @Option(names = "--on-pdb-blocked", paramLabel = "ACTION", defaultValue = "fail",
      description = "When a PodDisruptionBudget still blocks at the drain timeout: fail (default) or delete the pods.")
  String onPdbBlocked;

  @Option(names = "--skip-drain",
      description = "Cordon but do not drain (single-node clusters, where there is nowhere to evict to).")
  boolean skipDrain;

  @Option(names = "--ready-timeout", paramLabel = "DURATION", defaultValue = "300", converter = Converters.Seconds.class,
      description = "How long a node may take to be Ready at the new version (default ${DEFAULT-VALUE} s).")
  long readyTimeout;

  @Option(names = "--soak", paramLabel = "DURATION", defaultValue = "0", converter = Converters.Seconds.class,
      description = "Pause after each node before the next starts (default ${DEFAULT-VALUE} s).")
  long soak;

  @Option(names = "--window-start", paramLabel = "HH:mm",
      description = "Maintenance window: new nodes start only between --window-start and --window-end.")
  String windowStart;

  @Option(names = "--window-end", paramLabel = "HH:mm", description = "End of the maintenance window (may be past midnight).")
  String windowEnd;

  @Option(names = "--window-days", paramLabel = "DAY", split = ",",
      description = "Days the window opens, e.g. MON,TUE (default every day).")
  List<String> windowDays;

  @Option(names = "--window-time-zone", paramLabel = "ZONE", description = "Time zone of the window (default UTC).")
  String windowTimeZone;

  /** The run template: validated, artifacts from the catalogue, the distribution's host layout. */
  NodeUpgradeTemplate template() {
    ReleaseCatalogue.Release release;
    HostOs hostOs;
    try {
      hostOs = HostOs.parse(os);
    } catch (IllegalArgumentException e) {
      throw usage("--" + e.getMessage());
    }
    try {
      release = ReleaseCatalogue.parse(Files.readString(catalogue), catalogue.toString())
          .find(version, distribution, arch, hostOs);
    } catch (IOException e) {
      throw usage("--catalogue: cannot read " + catalogue + ": " + e.getMessage());
    } catch (IllegalArgumentException e) {
      throw usage("--catalogue: " + e.getMessage());
    }
    if (readyTimeout < 1) {
      throw usage("--ready-timeout must be at least 1 second, got " + readyTimeout);
    }
    SshSettings.jumpHostProblem(jumpHost).ifPresent(problem -> {
      throw usage("--" + problem.replaceFirst("^jump host", "jump-host"));
    });
    SshSettings ssh;
    try {
      ssh = new SshSettings(sshUser, sshPort, sshKeySecret, knownHostsSecret, jumpHost);
    } catch (IllegalArgumentException e) {
      throw usage("SSH options: " + e.getMessage());
    }
    PdbBlockedAction onBlocked = switch (onPdbBlocked.toLowerCase(java.util.Locale.ROOT)) {
      case "fail" -> PdbBlockedAction.FAIL;
      case "delete" -> PdbBlockedAction.DELETE;
      default -> throw usage("--on-pdb-blocked must be fail or delete, got '" + onPdbBlocked + "'");
    };
    DrainOptions drain;
    try {
      drain = new DrainOptions(drainTimeout, true, false, onBlocked, skipDrain);
    } catch (IllegalArgumentException e) {
      throw usage("--drain-timeout: " + e.getMessage());
    }
    try {
      return new NodeUpgradeTemplate(distribution, version, release.artifacts(), distribution.defaultProfile().withOs(hostOs), ssh,
          drain, readyTimeout, 0, arch);
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
  }

  /** A --max-unavailable value, checked by the rule the run applies: a usage error now, not a refused run. */
  String maxUnavailable(String value) {
    try {
      MaxUnavailable.parse(value);
      return value;
    } catch (IllegalArgumentException e) {
      throw usage("--" + e.getMessage().replaceFirst("^maxUnavailable", "max-unavailable"));
    }
  }

  /** The maintenance window, or null when none was given. */
  MaintenanceWindow window() {
    if (windowStart == null && windowEnd == null) {
      if (windowDays != null || windowTimeZone != null) {
        throw usage((windowDays != null ? "--window-days" : "--window-time-zone") + " needs --window-start and --window-end");
      }
      return null;
    }
    if (windowStart == null || windowEnd == null) {
      throw usage((windowStart == null ? "--window-start" : "--window-end") + " is missing: a window needs both ends");
    }
    try {
      return new MaintenanceWindow(windowDays, windowStart, windowEnd, windowTimeZone);
    } catch (IllegalArgumentException e) {
      throw usage("--window-*: " + e.getMessage());
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
