package dev.inplace.activities.host;

import dev.inplace.activities.ssh.ScriptOutput;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Parses the key=value lines of the inspect script into {@link HostFacts}. */
final class InspectOutput {
  private InspectOutput() {}

  static HostFacts parse(ScriptOutput out, List<Artifact> artifacts) {
    String arch = required(out, "arch");
    long free;
    try {
      free = Long.parseLong(required(out, "staging_free_bytes"));
    } catch (NumberFormatException e) {
      throw unexpected("staging_free_bytes is not a number: " + out.value("staging_free_bytes"));
    }
    Map<String, String> files = new HashMap<>();
    for (String line : out.values("file")) {
      int space = line.lastIndexOf(' ');
      if (space < 0) {
        throw unexpected("bad file line: " + line);
      }
      String digest = line.substring(space + 1);
      files.put(line.substring(0, space), HostScripts.ABSENT.equals(digest) ? null : digest);
    }
    List<InstalledFile> installed = new ArrayList<>();
    for (Artifact a : artifacts) {
      if (!files.containsKey(a.installPath())) {
        throw unexpected("no report for " + a.installPath());
      }
      installed.add(new InstalledFile(a.installPath(), files.get(a.installPath())));
    }
    String version = out.value("version");
    if (version == null || version.isEmpty() || !KubeVersion.isValid(version)) {
      version = null;
    }
    boolean active = "true".equals(required(out, "service_active"));
    return new HostFacts(arch, free, installed, version, active);
  }

  private static String required(ScriptOutput out, String key) {
    String value = out.value(key);
    if (value == null || value.isEmpty()) {
      throw unexpected("no " + key + "= line");
    }
    return value;
  }

  private static ApplicationFailure unexpected(String what) {
    return UpgradeFailures.nonRetryable(
        UpgradeFailures.PREFLIGHT_FAILED, "unexpected output from the inspect script: " + what);
  }
}
