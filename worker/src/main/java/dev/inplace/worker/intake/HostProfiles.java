package dev.inplace.worker.intake;

import dev.inplace.worker.crd.HostLayoutSpec;
import dev.inplace.worker.crd.InplaceHostProfile;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostPaths;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The host layout of a run: the distribution's standard one, or the admin-owned, cluster-scoped
 * {@link InplaceHostProfile} a request names, over it (each unset field keeps the standard value).
 * Either way every directory must be on the allowlist ({@link HostPaths}); a profile that is missing
 * or leaves it is {@code InvalidRequest}, and nothing is read beyond the one profile.
 */
final class HostProfiles {
  static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");

  private final KubernetesClient management;

  HostProfiles(KubernetesClient management) {
    this.management = management;
  }

  /** The layout for {@code host} ({@code standard}: {@code name} null). */
  HostProfile resolve(Distribution distribution, HostOs os, String name, IntakeRequest.FieldNames field)
      throws IntakeRefusal {
    HostProfile standard = distribution.defaultProfile().withOs(os);
    if (name == null) {
      return checked(distribution, standard,
          "the standard " + distribution.name().toLowerCase(java.util.Locale.ROOT) + " layout");
    }
    String what = InplaceHostProfile.KIND + " " + name;
    InplaceHostProfile found;
    try {
      found = management.resources(InplaceHostProfile.class).withName(name).get();
    } catch (KubernetesClientException e) {
      throw new IntakeUnavailable("cannot read " + what + ": HTTP " + e.getCode(), e);
    }
    if (found == null) {
      throw IntakeRefusal.invalid(field.of("hostProfile.name") + ": " + what
          + " not found (an administrator creates it: docs/crd-reference.md)");
    }
    HostLayoutSpec l = found.getSpec() == null ? new HostLayoutSpec() : found.getSpec();
    HostProfile profile;
    try {
      profile = new HostProfile(
          orDefault(l.getBinDir(), standard.binDir()),
          orDefault(l.getImagesDir(), standard.imagesDir()),
          orDefault(l.getStagingDir(), standard.stagingDir()),
          orDefault(l.getBackupDir(), standard.backupDir()),
          orDefault(l.getServerService(), standard.serverService()),
          orDefault(l.getAgentService(), standard.agentService()),
          os);
    } catch (IllegalArgumentException e) {
      throw IntakeRefusal.invalid(field.of("hostProfile.name") + ": " + what + ": " + e.getMessage());
    }
    return checked(distribution, profile, field.of("hostProfile.name") + ": " + what);
  }

  private static HostProfile checked(Distribution distribution, HostProfile profile, String what)
      throws IntakeRefusal {
    Optional<String> problem = HostPaths.problem(distribution, profile);
    if (problem.isPresent()) {
      throw IntakeRefusal.invalid(what + ": " + problem.get());
    }
    return profile;
  }

  private static String orDefault(String value, String fallback) {
    return value == null ? fallback : value;
  }
}
