package dev.inplace.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** `java -jar inplace.jar ...`: the packaged jar runs on its own and dispatches both ways. */
class InplaceJarIT {
  private static List<String> javaJar(String... args) {
    List<String> command = new java.util.ArrayList<>(List.of("java", "-jar", JarProcess.jar().toString()));
    command.addAll(List.of(args));
    return command;
  }

  @Test
  void theManifestNamesTheMainClassAndFindsEveryDependencyInLib() throws Exception {
    try (JarFile jar = new JarFile(JarProcess.jar().toFile())) {
      var attributes = jar.getManifest().getMainAttributes();
      assertEquals("dev.inplace.app.InplaceMain", attributes.getValue("Main-Class"));
      String[] classPath = attributes.getValue("Class-Path").split(" ");
      assertTrue(classPath.length > 10, "the Class-Path lists the dependencies");
      for (String entry : classPath) {
        assertTrue(entry.startsWith("lib/"), entry);
        assertTrue(
            JarProcess.jar().resolveSibling(entry).toFile().isFile(), "Class-Path entry " + entry + " is not in lib/");
      }
    }
  }

  @Test
  void workerWithoutTemporalAddressExitsTwoNamingIt() throws Exception {
    JarProcess p = JarProcess.run(javaJar("worker"), Map.of());

    assertEquals(2, p.exit(), p.toString());
    assertTrue(p.err().contains("TEMPORAL_ADDRESS"), p.toString());
  }

  @Test
  void workerHelpPrintsTheEnvironmentAndExitsZero() throws Exception {
    JarProcess p = JarProcess.run(javaJar("worker", "--help"), Map.of());

    assertEquals(0, p.exit(), p.toString());
    assertTrue(p.out().contains("INPLACE_WATCH_NAMESPACE") && p.out().contains("INPLACE_EXTENSION"), p.toString());
  }

  @Test
  void everyOtherCommandIsTheCli() throws Exception {
    JarProcess help = JarProcess.run(javaJar("--help"), Map.of());
    assertEquals(0, help.exit(), help.toString());
    assertTrue(help.out().contains("status") && help.out().contains("upgrade"), help.toString());

    // The CLI's own refusal, not the worker's: it needs Temporal to look a run up.
    JarProcess status = JarProcess.run(javaJar("status", "cp-upgrade/fleet/edge-1/v1.31.2+k3s1"), Map.of());
    assertEquals(2, status.exit(), status.toString());
    assertTrue(status.err().contains("TEMPORAL_ADDRESS") && !status.err().contains("inplace worker"), status.toString());
  }
}
