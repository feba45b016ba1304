package dev.inplace.sandbox.demo;

import dev.inplace.sandbox.estate.EstateSpec;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.UpgradeStep;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The demo's command line, parsed strictly: an unknown or malformed flag is an error, not ignored. */
public record DemoOptions(
    int controlPlanes,
    int workers,
    String from,
    String to,
    boolean json,
    List<Fault> faults,
    long binaryBytes,
    long drainTimeoutSeconds,
    boolean keep) {

  /** A fault to inject: {@code --fail NODE:STEP}. */
  public record Fault(String node, UpgradeStep step) {}

  public static final List<UpgradeStep> FAULT_STEPS =
      List.of(UpgradeStep.PREFLIGHT, UpgradeStep.STAGE, UpgradeStep.DRAIN, UpgradeStep.BACKUP,
          UpgradeStep.INSTALL, UpgradeStep.RESTART, UpgradeStep.VERIFY);

  public static final String USAGE =
      """
      usage: inplace demo [options]
        --control-planes N     control-plane nodes (default 1)
        --workers N            worker nodes (default 3)
        --from VERSION         version the estate starts on (default %s)
        --to VERSION           version to upgrade to (default %s)
        --fail NODE:STEP       inject a failure, e.g. worker-1:restart (repeatable);
                               steps: %s
        --binary-size-mib N    size of the fake k3s binary (default 32)
        --drain-timeout S      seconds a drain may be blocked by a PodDisruptionBudget (default 20)
        --json                 end with one JSON line summarising the run
        --keep                 keep the estate directory for inspection
      """
          .formatted(EstateSpec.DEFAULT_FROM, EstateSpec.DEFAULT_TO,
              String.join(", ", FAULT_STEPS.stream().map(UpgradeStep::cliName).toList()));

  public static DemoOptions parse(String... args) {
    int controlPlanes = 1;
    int workers = 3;
    String from = EstateSpec.DEFAULT_FROM;
    String to = EstateSpec.DEFAULT_TO;
    boolean json = false;
    boolean keep = false;
    long binaryMiB = 32;
    long drainTimeout = 20;
    List<Fault> faults = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--control-planes" -> controlPlanes = intValue(arg, value(args, ++i, arg));
        case "--workers" -> workers = intValue(arg, value(args, ++i, arg));
        case "--from" -> from = version(arg, value(args, ++i, arg));
        case "--to" -> to = version(arg, value(args, ++i, arg));
        case "--fail" -> faults.add(fault(value(args, ++i, arg)));
        case "--binary-size-mib" -> binaryMiB = intValue(arg, value(args, ++i, arg));
        case "--drain-timeout" -> drainTimeout = intValue(arg, value(args, ++i, arg));
        case "--json" -> json = true;
        case "--keep" -> keep = true;
        default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
      }
    }
    if (binaryMiB < 1 || binaryMiB > 512) {
      throw new IllegalArgumentException("--binary-size-mib must be 1..512");
    }
    if (drainTimeout < 1) {
      throw new IllegalArgumentException("--drain-timeout must be at least 1");
    }
    if (KubeVersion.parse(to).compareTo(KubeVersion.parse(from)) <= 0) {
      throw new IllegalArgumentException("--to " + to + " must be newer than --from " + from);
    }
    return new DemoOptions(controlPlanes, workers, from, to, json, List.copyOf(faults), binaryMiB << 20, drainTimeout, keep);
  }

  public EstateSpec estateSpec() {
    return new EstateSpec(
        controlPlanes, workers, from, to,
        new FakeReleaseSizes(binaryBytes, FakeReleaseSizes.defaults().imagePaddingBytes()),
        Duration.ofSeconds(1));
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length || args[i].startsWith("--")) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  private static int intValue(String flag, String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number, got '" + text + "'");
    }
  }

  private static String version(String flag, String text) {
    try {
      KubeVersion.parse(text);
      return text;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(flag + ": " + e.getMessage());
    }
  }

  private static Fault fault(String text) {
    int colon = text.indexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("--fail needs NODE:STEP, e.g. worker-1:restart; got '" + text + "'");
    }
    UpgradeStep step;
    try {
      step = UpgradeStep.fromCliName(text.substring(colon + 1));
    } catch (IllegalArgumentException e) {
      step = null;
    }
    if (step == null || !FAULT_STEPS.contains(step)) {
      throw new IllegalArgumentException(
          "--fail: cannot inject a failure at '" + text.substring(colon + 1) + "'; steps: "
              + String.join(", ", FAULT_STEPS.stream().map(UpgradeStep::cliName).toList()));
    }
    return new Fault(text.substring(0, colon), step);
  }
}
