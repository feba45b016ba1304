package dev.inplace.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The test bed's binaries, built by {@code testbed/build.sh} from their Go modules into a cache outside
 * the repository ({@code INPLACE_TESTBED_HOME}, default {@code ~/.cache/inplace-testbed}). Asking for a
 * binary builds it first when it is missing or not at its pinned version; the script's progress lines
 * go to this JVM's standard error.
 */
public final class TestbedBinaries {
  private static final Logger log = LoggerFactory.getLogger(TestbedBinaries.class);

  private final Path script;
  private final Path bin;
  private final Path manifests;

  private TestbedBinaries(Path script, Path home) {
    this.script = script;
    this.bin = home.resolve("bin");
    this.manifests = home.resolve("manifests");
  }

  /** The test bed of the checkout this JVM runs in (found from the working directory upwards). */
  public static TestbedBinaries locate() {
    Path dir = Path.of("").toAbsolutePath();
    for (Path d = dir; d != null; d = d.getParent()) {
      Path candidate = d.resolve("testbed/build.sh");
      if (Files.isRegularFile(candidate)) {
        return new TestbedBinaries(candidate, cacheHome());
      }
    }
    throw new IllegalStateException("no testbed/build.sh above " + dir + ": run from an inplace checkout");
  }

  static Path cacheHome() {
    String explicit = System.getenv("INPLACE_TESTBED_HOME");
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit);
    }
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
    return base.resolve("inplace-testbed");
  }

  /**
   * The path of each named component (a binary, or for {@code *-manifests} a directory of YAML),
   * built first where needed (one build at a time).
   */
  public synchronized List<Path> ensure(String... components) {
    List<String> command = new ArrayList<>(List.of("bash", script.toString()));
    command.addAll(List.of(components));
    try {
      Process build = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.INHERIT)
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      int rc = build.waitFor();
      if (rc != 0) {
        throw new IllegalStateException("testbed/build.sh " + String.join(" ", components) + " exited " + rc
            + " (its output above says why; docs/testbed.md)");
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run testbed/build.sh", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building the test bed", e);
    }
    List<Path> paths = new ArrayList<>();
    for (String c : components) {
      paths.add(c.endsWith("-manifests") ? manifests.resolve(c) : binary(c));
    }
    log.debug("testbed binaries ready: {}", paths);
    return paths;
  }

  /** A version pinned in testbed/versions.env, e.g. {@code KUBERNETES_VERSION}. */
  public String pinnedVersion(String key) {
    try {
      for (String line : Files.readAllLines(script.resolveSibling("versions.env"))) {
        if (line.startsWith(key + "=")) {
          return line.substring(key.length() + 1).trim();
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read testbed/versions.env", e);
    }
    throw new IllegalStateException("testbed/versions.env pins no " + key);
  }

  /** The path of one component's binary, which must already be built. */
  public Path binary(String component) {
    Path path = bin.resolve(component);
    if (!Files.isExecutable(path)) {
      throw new IllegalStateException(component + " is not built: run ./inplace testbed build " + component);
    }
    return path;
  }
}
