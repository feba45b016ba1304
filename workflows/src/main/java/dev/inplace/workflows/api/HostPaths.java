package dev.inplace.workflows.api;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The allowlist of a host profile's directories (issue 34, H1 and H2): the scripts run as root,
 * execute binaries from {@code binDir} and write into {@code stagingDir} and {@code backupDir}, so
 * none of them may be a directory someone else chooses. Per field:
 *
 * <ul>
 *   <li>{@code binDir}: one of the distribution's binary directories ({@link
 *       InstallLayout#binaryDirs()}: k3s {@code /usr/local/bin} or {@code /opt/bin}; kubeadm {@code
 *       /usr/bin} or {@code /usr/local/bin}; k0s {@code /usr/local/bin} or {@code /usr/bin});
 *   <li>{@code imagesDir}: one of the distribution's image directories ({@link
 *       InstallLayout#imageDirs()});
 *   <li>{@code stagingDir} and {@code backupDir}: a directory under {@value #INPLACE_ROOT} (one or
 *       more plain name segments), distinct, neither inside the other.
 * </ul>
 *
 * Applied at intake and again in the NodeUpgrade preflight (a run started by hand skips the intake);
 * the scripts then refuse a symbolic link anywhere on these paths, on the host, before they use them.
 */
public final class HostPaths {
  /** The root-owned directory the product's own working directories live under. */
  public static final String INPLACE_ROOT = "/var/lib/inplace";

  private static final Pattern UNDER_INPLACE_ROOT =
      Pattern.compile(Pattern.quote(INPLACE_ROOT) + "(/[A-Za-z0-9_][A-Za-z0-9._-]*)+");

  private HostPaths() {}

  /** The first directory of {@code profile} outside the allowlist for {@code distribution}, if any. */
  public static Optional<String> problem(Distribution distribution, HostProfile profile) {
    InstallLayout layout = distribution.installLayout();
    return oneOf("binDir", profile.binDir(), layout.binaryDirs(), distribution)
        .or(() -> oneOf("imagesDir", profile.imagesDir(), layout.imageDirs(), distribution))
        .or(() -> underInplaceRoot("stagingDir", profile.stagingDir()))
        .or(() -> underInplaceRoot("backupDir", profile.backupDir()))
        .or(() -> apart(profile.stagingDir(), profile.backupDir()));
  }

  private static Optional<String> oneOf(String field, String value, List<String> allowed, Distribution distribution) {
    if (allowed.contains(value)) {
      return Optional.empty();
    }
    return Optional.of(field + " " + value + " is not a " + distribution.name().toLowerCase(java.util.Locale.ROOT)
        + " directory; allowed: " + String.join(", ", allowed));
  }

  private static Optional<String> underInplaceRoot(String field, String value) {
    if (UNDER_INPLACE_ROOT.matcher(value).matches() && !value.contains("/..")) {
      return Optional.empty();
    }
    return Optional.of(field + " " + value + " is not a directory under " + INPLACE_ROOT
        + "/ (one or more name segments, e.g. " + INPLACE_ROOT + "/staging)");
  }

  private static Optional<String> apart(String staging, String backup) {
    if (staging.equals(backup) || staging.startsWith(backup + "/") || backup.startsWith(staging + "/")) {
      return Optional.of("stagingDir " + staging + " and backupDir " + backup
          + " must be distinct directories, neither inside the other");
    }
    return Optional.empty();
  }
}
