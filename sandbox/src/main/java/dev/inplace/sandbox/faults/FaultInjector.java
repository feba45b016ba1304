package dev.inplace.sandbox.faults;

import dev.inplace.workflows.api.UpgradeStep;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Arms and clears injected faults on simulated nodes. A fault is a file {@code <node
 * root>/.sandbox/faults/<step>} holding the target version, so the pieces that make it bite (the
 * SSH exec handler, the fake {@code systemctl}, the kubelet simulator) read plain files and nothing
 * is shared in memory between them.
 *
 * <p>How each step bites:
 *
 * <ul>
 *   <li>preflight, stage, backup, install, upgrade, restore, snapshot: a script sent to {@code bash -s}
 *       carrying the marker {@code # inplace-step: <step>} fails (exit 1) on every attempt while
 *       armed (snapshot: the etcd snapshot taken before a control-plane upgrade; upgrade: {@code
 *       kubeadm upgrade apply|node} on kubeadm nodes);
 *   <li>restart: {@code systemctl restart|start} fails while the installed binary reports the armed
 *       version, so the new binary "does not start" and the old one, restored, does;
 *   <li>verify: the kubelet simulator keeps the node NotReady while it runs the armed version;
 *   <li>drain: recorded only; the estate blocks the drain with a PodDisruptionBudget.
 * </ul>
 *
 * <p>Kairos nodes have two more, about their reboots ({@link #KAIROS_FAULTS}, enforced by {@code
 * sandbox-bin/kairos-boot}): {@code boot}, the image of the armed version does not boot and boot
 * assessment falls back to the passive image; {@code return}, the node does not come back (its SSH
 * server stays down) after booting that image.
 */
public final class FaultInjector {
  private static final Logger LOG = LoggerFactory.getLogger(FaultInjector.class);

  /** Steps a fault can be armed for. */
  public static final Set<UpgradeStep> SUPPORTED =
      Collections.unmodifiableSet(
          EnumSet.of(
              UpgradeStep.PREFLIGHT,
              UpgradeStep.STAGE,
              UpgradeStep.DRAIN,
              UpgradeStep.BACKUP,
              UpgradeStep.INSTALL,
              UpgradeStep.UPGRADE,
              UpgradeStep.RESTART,
              UpgradeStep.VERIFY,
              UpgradeStep.RESTORE,
              UpgradeStep.SNAPSHOT));

  /** Steps whose fault is enforced by the SSH exec handler on the script marker. */
  public static final Set<UpgradeStep> SCRIPT_STEPS =
      Collections.unmodifiableSet(
          EnumSet.of(
              UpgradeStep.PREFLIGHT,
              UpgradeStep.STAGE,
              UpgradeStep.BACKUP,
              UpgradeStep.INSTALL,
              UpgradeStep.UPGRADE,
              UpgradeStep.RESTORE,
              UpgradeStep.SNAPSHOT));

  /** Faults of Kairos reboots: the new image does not boot; the host never comes back. */
  public static final Set<String> KAIROS_FAULTS = Set.of("boot", "return");

  private static final Path FAULTS_DIR = Path.of(".sandbox", "faults");

  private final Path hostsDir;

  /**
   * @param hostsDir the directory holding one root directory per node ({@code <estateDir>/hosts})
   */
  public FaultInjector(Path hostsDir) {
    this.hostsDir = hostsDir.toAbsolutePath();
  }

  /** Arms a fault at {@code step} on {@code node} for the upgrade to {@code targetVersion}. */
  public void arm(String node, UpgradeStep step, String targetVersion) {
    requireSupported(step);
    if (targetVersion == null || targetVersion.isBlank() || targetVersion.contains("\n")) {
      throw new IllegalArgumentException("fault target version must be one non-blank line");
    }
    Path file = faultFile(nodeRoot(node), step);
    try {
      Files.createDirectories(file.getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.writeString(tmp, targetVersion.trim() + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot arm fault " + step.cliName() + " on " + node, e);
    }
    LOG.info("armed fault {} on node {} for version {}", step.cliName(), node, targetVersion);
  }

  /** Arms the Kairos reboot fault {@code fault} ({@link #KAIROS_FAULTS}) on {@code node} for the image of {@code version}. */
  public void armKairos(String node, String fault, String version) {
    if (!KAIROS_FAULTS.contains(fault)) {
      throw new IllegalArgumentException("unknown Kairos fault '" + fault + "'; faults: " + KAIROS_FAULTS);
    }
    if (version == null || version.isBlank() || version.contains("\n")) {
      throw new IllegalArgumentException("fault target version must be one non-blank line");
    }
    Path file = nodeRoot(node).resolve(FAULTS_DIR).resolve(fault);
    try {
      Files.createDirectories(file.getParent());
      Path tmp = file.resolveSibling(fault + ".tmp");
      Files.writeString(tmp, version.trim() + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot arm fault " + fault + " on " + node, e);
    }
    LOG.info("armed fault {} on node {} for version {}", fault, node, version);
  }

  /** Clears every fault of {@code node}. */
  public void clear(String node) {
    Path root = nodeRoot(node);
    for (UpgradeStep step : SUPPORTED) {
      delete(node, faultFile(root, step));
    }
    for (String fault : KAIROS_FAULTS) {
      delete(node, root.resolve(FAULTS_DIR).resolve(fault));
    }
  }

  /** Clears the fault at {@code step} of {@code node}, if armed. */
  public void clear(String node, UpgradeStep step) {
    requireSupported(step);
    delete(node, faultFile(nodeRoot(node), step));
  }

  /** The faults armed on {@code node}, by step, with their target versions. */
  public Map<UpgradeStep, String> armed(String node) {
    Path root = nodeRoot(node);
    Map<UpgradeStep, String> result = new EnumMap<>(UpgradeStep.class);
    Path dir = root.resolve(FAULTS_DIR);
    if (!Files.isDirectory(dir)) {
      return result;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        SUPPORTED.stream()
            .filter(s -> s.cliName().equals(name))
            .findFirst()
            .ifPresent(s -> armedVersion(root, s).ifPresent(v -> result.put(s, v)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list faults of " + node, e);
    }
    return result;
  }

  /**
   * The target version of the fault armed at {@code step} under a node root, if any. Used by the
   * parts of the sandbox that make faults bite.
   */
  public static Optional<String> armedVersion(Path nodeRoot, UpgradeStep step) {
    try {
      return Optional.of(
          Files.readString(faultFile(nodeRoot, step), StandardCharsets.UTF_8).trim());
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read fault " + step.cliName(), e);
    }
  }

  /** The file that arms {@code step} under a node root. */
  public static Path faultFile(Path nodeRoot, UpgradeStep step) {
    return nodeRoot.resolve(FAULTS_DIR).resolve(step.cliName());
  }

  private Path nodeRoot(String node) {
    if (node == null || node.isBlank() || node.contains("/") || node.startsWith(".")) {
      throw new IllegalArgumentException("invalid node name '" + node + "'");
    }
    Path root = hostsDir.resolve(node);
    if (!Files.isDirectory(root)) {
      throw new IllegalArgumentException("unknown node '" + node + "' (no root at " + root + ")");
    }
    return root;
  }

  private static void requireSupported(UpgradeStep step) {
    if (step == null || !SUPPORTED.contains(step)) {
      throw new IllegalArgumentException(
          "cannot inject a fault at step "
              + (step == null ? "null" : step.cliName())
              + "; supported steps: "
              + SUPPORTED.stream().map(UpgradeStep::cliName).collect(Collectors.joining(", ")));
    }
  }

  private static void delete(String node, Path file) {
    try {
      if (Files.deleteIfExists(file)) {
        LOG.info("cleared fault {} on node {}", file.getFileName(), node);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clear fault " + file.getFileName() + " on " + node, e);
    }
  }
}
