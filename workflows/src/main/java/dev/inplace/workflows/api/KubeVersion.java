package dev.inplace.workflows.api;

import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kubernetes version as k3s, kubeadm and k0s print it: {@code v1.31.2}, {@code v1.31.2+k3s1},
 * {@code v1.31.2+k0s.0}. The build suffix ({@code +k3sN}, {@code +k0s.N}) orders releases of the same
 * upstream patch.
 */
public record KubeVersion(int major, int minor, int patch, String build)
    implements Comparable<KubeVersion> {
  private static final Pattern FORMAT =
      Pattern.compile("v?(\\d+)\\.(\\d+)\\.(\\d+)(?:-[0-9A-Za-z.-]+)?(?:\\+([0-9A-Za-z.-]+))?");
  /**
   * The trailing number of a build suffix: 1 in {@code k3s1}, 12 in {@code k3s12}, 1 in k0s's {@code
   * k0s.1}.
   */
  private static final Pattern BUILD_NUMBER = Pattern.compile("[A-Za-z0-9]*?[A-Za-z]\\.?(\\d+)");

  private static final Comparator<KubeVersion> ORDER =
      Comparator.comparingInt(KubeVersion::major)
          .thenComparingInt(KubeVersion::minor)
          .thenComparingInt(KubeVersion::patch)
          .thenComparingInt(KubeVersion::buildNumber);

  /** Parses a version, throwing {@link IllegalArgumentException} with the offending text. */
  public static KubeVersion parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("version is required");
    }
    Matcher m = FORMAT.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a Kubernetes version like v1.31.2 or v1.31.2+k3s1");
    }
    return new KubeVersion(
        Integer.parseInt(m.group(1)),
        Integer.parseInt(m.group(2)),
        Integer.parseInt(m.group(3)),
        m.group(4) == null ? "" : m.group(4));
  }

  public static boolean isValid(String text) {
    try {
      parse(text);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** The build suffix a k0s node's kubelet reports for every k0s release {@code +k0s.N}. */
  public static final String K0S_NODE_BUILD = "k0s";

  /**
   * Whether a Node reporting {@code nodeVersion} runs the release {@code target}: the same version,
   * or for k0s the same upstream version with the build {@code k0s} (a k0s node reports {@code
   * v1.31.2+k0s} for {@code v1.31.2+k0s.0}, docs/k0s.md).
   */
  public static boolean nodeRuns(String nodeVersion, String target) {
    if (!isValid(nodeVersion) || !isValid(target)) {
      return false;
    }
    KubeVersion node = parse(nodeVersion);
    KubeVersion release = parse(target);
    if (node.equals(release)) {
      return true;
    }
    return node.build.equals(K0S_NODE_BUILD)
        && release.build.startsWith(K0S_NODE_BUILD + ".")
        && node.major == release.major
        && node.minor == release.minor
        && node.patch == release.patch;
  }

  /**
   * Whether a Machine is done at the release {@code target}: its Node runs it ({@link #nodeRuns})
   * and its {@code spec.version} records it. For k0s the Machine's version is what tells {@code
   * +k0s.0} from {@code +k0s.1}, since the Node reports {@code +k0s} for both; a Machine whose
   * version is missing or another build is not done (its NodeUpgrade decides from the digests).
   */
  public static boolean machineAt(String machineVersion, String nodeVersion, String target) {
    return nodeRuns(nodeVersion, target)
        && isValid(machineVersion)
        && parse(machineVersion).equals(parse(target));
  }

  private int buildNumber() {
    Matcher m = BUILD_NUMBER.matcher(build);
    return m.matches() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** Number of minor versions from this one to {@code other} (negative when other is older). */
  public int minorsTo(KubeVersion other) {
    if (other.major != major) {
      return (other.major - major) * 1000;
    }
    return other.minor - minor;
  }

  @Override
  public int compareTo(KubeVersion o) {
    return ORDER.compare(this, o);
  }

  @Override
  public String toString() {
    return "v" + major + "." + minor + "." + patch + (build.isEmpty() ? "" : "+" + build);
  }
}
