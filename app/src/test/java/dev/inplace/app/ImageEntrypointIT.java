package dev.inplace.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * No Docker daemon here: runs the image's exact ENTRYPOINT (only the jar's and the JVM options' paths
 * replaced by the checkout's) with the image's ENV, as `docker run IMAGE [args]` would, so the entrypoint cannot rot.
 */
class ImageEntrypointIT {
  private final Dockerfile dockerfile = Dockerfile.read(Dockerfile.path());

  private List<String> entrypoint(String... dockerRunArgs) {
    List<String> command = new ArrayList<>(dockerfile.entrypoint());
    int jar = command.indexOf("-jar") + 1;
    command.set(jar, JarProcess.jar().toAbsolutePath().toString());
    // The image's argfile, from the checkout (the Dockerfile copies it from there).
    command.replaceAll(arg -> arg.equals("@" + DockerfileTest.JAVA_OPTIONS_IN_IMAGE)
        ? "@" + DockerfileTest.javaOptions().toAbsolutePath() : arg);
    command.addAll(List.of(dockerRunArgs));
    return command;
  }

  @Test
  void helpPrintsTheWorkersUsageAndExitsZero() throws Exception {
    JarProcess p = JarProcess.run(entrypoint("--help"), dockerfile.env());

    assertEquals(0, p.exit(), p.toString());
    assertTrue(p.out().startsWith("usage: inplace worker"), p.toString());
    assertTrue(p.out().contains("TEMPORAL_ADDRESS") && p.out().contains("INPLACE_ARTIFACT_CACHE"), p.toString());
    // With the image's JVM options, and nothing of theirs on stdout before the usage.
    assertTrue(entrypoint().contains("@" + DockerfileTest.javaOptions().toAbsolutePath()), entrypoint().toString());
  }

  @Test
  void aStartWithoutConfigurationExitsTwoNamingTemporalAddress() throws Exception {
    JarProcess p = JarProcess.run(entrypoint(), dockerfile.env());

    assertEquals(2, p.exit(), p.toString());
    assertTrue(p.err().contains("TEMPORAL_ADDRESS"), p.toString());
  }
}
