package dev.inplace.sandbox.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The Temporal CLI binary the test bed builds ({@code testbed/build.sh temporal}, pinned in
 * {@code testbed/versions.env}) into its cache outside the repository: {@code $INPLACE_TESTBED_HOME},
 * else {@code $XDG_CACHE_HOME/inplace-testbed}, else {@code ~/.cache/inplace-testbed}, as the script
 * resolves it. Nothing is downloaded prebuilt: a missing binary is built from its Go module.
 */
public final class TemporalCli {
  private TemporalCli() {}

  /** Where the test bed keeps the binary (whether or not it is built yet). */
  public static Path expectedPath() {
    return cacheHome().resolve("bin").resolve("temporal");
  }

  /**
   * The binary, built first by the checkout's {@code testbed/build.sh} (found from the working
   * directory upwards) when it is missing; the script's progress goes to this JVM's standard error.
   */
  public static Path ensure() {
    Path binary = expectedPath();
    if (Files.isExecutable(binary)) {
      return binary;
    }
    Path script = buildScript().orElseThrow(() -> new LocalStack.StackException(
        "--temporal dev-server needs the Temporal CLI, which is not built (" + binary + ") and there is no"
            + " testbed/build.sh above " + Path.of("").toAbsolutePath() + " to build it: run ./inplace testbed build"
            + " temporal in an inplace checkout, or use --temporal test-server"));
    System.err.println("inplace: building the Temporal CLI with " + script + " temporal (once; docs/testbed.md)");
    try {
      Process build = new ProcessBuilder(List.of("bash", script.toString(), "temporal"))
          .redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      int rc = build.waitFor();
      if (rc != 0 || !Files.isExecutable(binary)) {
        throw new LocalStack.StackException("testbed/build.sh temporal exited " + rc + " without " + binary
            + " (its output above says why; docs/testbed.md); --temporal test-server needs no build");
      }
      return binary;
    } catch (IOException e) {
      throw new LocalStack.StackException("cannot run " + script + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LocalStack.StackException("interrupted while building the Temporal CLI");
    }
  }

  private static Optional<Path> buildScript() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path candidate = d.resolve("testbed").resolve("build.sh");
      if (Files.isRegularFile(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
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
}
