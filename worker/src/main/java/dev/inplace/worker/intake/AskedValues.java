package dev.inplace.worker.intake;

import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.SshSettings;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The values of an {@link IntakeRequest}, checked and defaulted before anything they name is read:
 * each problem is {@code InvalidRequest}, naming the field as the door calls it.
 */
record AskedValues(
    String version,
    String arch,
    HostOs os,
    SshSettings ssh,
    String hostProfile,
    DrainOptions drain,
    long readyTimeoutSeconds,
    long minFreeBytes,
    MaintenanceWindow window) {
  static final String DEFAULT_ARCH = "amd64";
  static final long DEFAULT_READY_TIMEOUT_SECONDS = 300;
  static final long DEFAULT_MIN_FREE_BYTES = 0;
  private static final Pattern ARCH = Pattern.compile("[a-z0-9_]+");

  static AskedValues check(IntakeRequest ask) throws IntakeRefusal {
    IntakeRequest.FieldNames field = ask.fields();
    String version = ask.targetVersion();
    if (version == null || !KubeVersion.isValid(version)) {
      throw IntakeRefusal.invalid(field.of("version") + " must be a Kubernetes version like v1.31.2+k3s1, got '"
          + version + "'");
    }
    String arch = ask.arch() == null ? DEFAULT_ARCH : ask.arch();
    if (!ARCH.matcher(arch).matches()) {
      throw IntakeRefusal.invalid(field.of("arch") + " must be a name like amd64 or arm64, got '" + arch + "'");
    }
    IntakeRequest.Host host = ask.host() == null ? IntakeRequest.Host.ofOs(null) : ask.host();
    HostOs os;
    try {
      os = HostOs.parse(host.os());
    } catch (IllegalArgumentException e) {
      throw IntakeRefusal.invalid(field.of("hostProfile.os") + " must be standard or kairos, got '" + host.os() + "'");
    }
    SshSettings ssh = ssh(ask.ssh(), field);
    String hostProfile = hostProfileName(host, field);
    DrainOptions drain = drain(ask, field);
    long ready = atLeast(ask.readyTimeoutSeconds(), DEFAULT_READY_TIMEOUT_SECONDS, 1, field.of("readyTimeoutSeconds"));
    long minFree = atLeast(ask.minFreeBytes(), DEFAULT_MIN_FREE_BYTES, 0, field.of("minFreeBytes"));
    MaintenanceWindow window = window(ask.window(), field);
    if (ask.catalogue().configMap() == null || ask.catalogue().configMap().isBlank()) {
      throw IntakeRefusal.invalid(field.of("releaseCatalogue.configMapName") + " is required");
    }
    checkTargets(ask, ask.machines());
    return new AskedValues(version, arch, os, ssh, hostProfile, drain, ready, minFree, window);
  }

  private static SshSettings ssh(IntakeRequest.Ssh ssh, IntakeRequest.FieldNames field) throws IntakeRefusal {
    java.util.Optional<String> jump = SshSettings.jumpHostProblem(ssh.jumpHost());
    if (jump.isPresent()) {
      throw IntakeRefusal.invalid(field.of("ssh") + ": " + jump.get());
    }
    try {
      return new SshSettings(
          ssh.user() == null ? "root" : ssh.user(),
          ssh.port() == null ? 22 : ssh.port(),
          ssh.privateKeySecret(),
          ssh.knownHostsSecret(),
          ssh.jumpHost());
    } catch (IllegalArgumentException e) {
      throw IntakeRefusal.invalid(field.of("ssh") + ": " + e.getMessage());
    }
  }

  /**
   * The name of the host profile asked for (null: the standard layout), a name a Kubernetes object
   * can have; {@link HostProfiles} reads it once every asked value is checked.
   */
  private static String hostProfileName(IntakeRequest.Host host, IntakeRequest.FieldNames field)
      throws IntakeRefusal {
    if (host.profileName() != null && !HostProfiles.NAME.matcher(host.profileName()).matches()) {
      throw IntakeRefusal.invalid(field.of("hostProfile.name") + " must name an InplaceHostProfile (a lower-case DNS"
          + " name), got '" + host.profileName() + "'");
    }
    return host.profileName();
  }

  /** The request's drain options over the defaults; a one-Machine cluster skips the drain. */
  private static DrainOptions drain(IntakeRequest ask, IntakeRequest.FieldNames field) throws IntakeRefusal {
    DrainOptions d = DrainOptions.defaults();
    IntakeRequest.Drain asked = ask.drain() == null ? new IntakeRequest.Drain(null, null, null, null, null) : ask.drain();
    try {
      return new DrainOptions(
          orDefault(asked.timeoutSeconds(), d.timeoutSeconds()),
          orDefault(asked.deleteEmptyDirData(), d.deleteEmptyDirData()),
          orDefault(asked.force(), d.force()),
          orDefault(asked.onBlocked(), d.onBlocked()),
          orDefault(asked.skip(), d.skip()) || ask.singleNodeCluster());
    } catch (IllegalArgumentException e) {
      throw IntakeRefusal.invalid(field.of("drain") + ": " + e.getMessage());
    }
  }

  private static MaintenanceWindow window(IntakeRequest.Window window, IntakeRequest.FieldNames field)
      throws IntakeRefusal {
    if (window == null) {
      return null;
    }
    try {
      return new MaintenanceWindow(window.days(), window.start(), window.end(), window.timeZone());
    } catch (IllegalArgumentException | NullPointerException e) {
      throw IntakeRefusal.invalid(field.of("maintenanceWindow") + ": "
          + (e.getMessage() == null ? "start and end are required" : e.getMessage()));
    }
  }

  private static long atLeast(Long value, long fallback, long min, String name) throws IntakeRefusal {
    long v = value == null ? fallback : value;
    if (v < min) {
      throw IntakeRefusal.invalid(name + " must be >= " + min + ", got " + v);
    }
    return v;
  }

  /** Every Machine must make a valid node target (an address, a node name). */
  private static void checkTargets(IntakeRequest ask, List<MachineInfo> machines) throws IntakeRefusal {
    for (MachineInfo m : machines) {
      try {
        m.target(ask.cluster());
      } catch (IllegalArgumentException e) {
        throw IntakeRefusal.invalid("Machine " + m.name() + ": " + e.getMessage());
      }
    }
  }

  private static <T> T orDefault(T value, T fallback) {
    return value == null ? fallback : value;
  }
}
