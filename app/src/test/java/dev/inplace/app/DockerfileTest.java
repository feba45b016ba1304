package dev.inplace.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What the image promises, read from deploy/image/Dockerfile itself. */
class DockerfileTest {
  /** Where the image keeps the worker's JVM options (deploy/image/java.options). */
  static final String JAVA_OPTIONS_IN_IMAGE = "/opt/inplace/java.options";

  private final Dockerfile dockerfile = Dockerfile.read(Dockerfile.path());

  static Path javaOptions() {
    return Dockerfile.path().resolveSibling("java.options");
  }

  @Test
  void theImageRunsAsANumericNonRootUser() {
    String user = dockerfile.last("USER");
    assertTrue(user.matches("\\d+(:\\d+)?"), "USER must be numeric (runAsNonRoot checks it), got " + user);
    for (String id : user.split(":")) {
      assertTrue(Integer.parseInt(id) > 0, "USER must not be root: " + user);
    }
  }

  @Test
  void theBaseIsAJava17OrNewerJre() {
    Matcher m = Pattern.compile("eclipse-temurin:(\\d+)-jre.*").matcher(dockerfile.last("FROM"));
    assertTrue(m.matches(), "expected an eclipse-temurin JRE base, got " + dockerfile.last("FROM"));
    assertTrue(Integer.parseInt(m.group(1)) >= 17, "Java 17+ needed, got " + m.group(1));
  }

  @Test
  void theEntrypointRunsTheWorkerFromTheCopiedJarWithItsLibBeside() {
    List<String> entrypoint = dockerfile.entrypoint();
    int jar = entrypoint.indexOf("-jar");
    assertTrue(jar >= 0, "the entrypoint runs java -jar: " + entrypoint);
    String jarPath = entrypoint.get(jar + 1);
    assertEquals("worker", entrypoint.get(entrypoint.size() - 1), "the entrypoint runs `worker`: " + entrypoint);
    String dir = jarPath.substring(0, jarPath.lastIndexOf('/') + 1);
    List<String> copies = dockerfile.all("COPY");
    assertTrue(copies.contains("app/target/inplace.jar " + jarPath), "the jar is copied to " + jarPath + ": " + copies);
    assertTrue(copies.contains("app/target/lib/ " + dir + "lib/"), "lib/ is copied beside the jar: " + copies);
  }

  @Test
  void theEntrypointReadsTheWorkersJvmOptionsFromTheFileTheImageCopiesFromTheCheckout() throws IOException {
    List<String> entrypoint = dockerfile.entrypoint();
    assertTrue(entrypoint.indexOf("@" + JAVA_OPTIONS_IN_IMAGE) > 0
            && entrypoint.indexOf("@" + JAVA_OPTIONS_IN_IMAGE) < entrypoint.indexOf("-jar"),
        "java reads the options file before -jar: " + entrypoint);
    assertTrue(dockerfile.all("COPY").contains("deploy/image/java.options " + JAVA_OPTIONS_IN_IMAGE), dockerfile.all("COPY").toString());
    List<String> options = Files.readAllLines(javaOptions()).stream()
        .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    // quiet first: otherwise the JVM prints every compile command on stdout, before the CLI's own output.
    assertEquals("-XX:CompileCommand=quiet", options.get(0), options.toString());
  }

  /** The four counts that send a method from C1 to C2. */
  static final List<String> TIER4_THRESHOLDS =
      List.of("Tier4InvocationThreshold", "Tier4MinInvocationThreshold", "Tier4CompileThreshold", "Tier4BackEdgeThreshold");

  @Test
  void cTwoWaitsForHotterCodeButCompilesTheCryptoProviderAtATwentiethOfTheJvmsDefaultCounts() throws IOException {
    Map<String, String> flags = new HashMap<>();
    String scaling = null;
    for (String line : Files.readAllLines(javaOptions())) {
      String option = line.strip();
      assertTrue(!option.startsWith("-XX:CompileThresholdScaling"),
          "a JVM-wide scaling would multiply the counts below again: " + option);
      if (option.startsWith("-XX:Tier4")) {
        String[] nameValue = option.substring("-XX:".length()).split("=", 2);
        flags.put(nameValue[0], nameValue[1]);
      } else if (option.startsWith("-XX:CompileCommand=CompileThresholdScaling,com.sun.crypto.provider.*::*,")) {
        scaling = option.substring(option.lastIndexOf(',') + 1);
      }
    }
    assertEquals(Set.copyOf(TIER4_THRESHOLDS), flags.keySet(), "all four counts, scaled alike: " + flags);
    HotSpotDiagnosticMXBean thisJvm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    for (String threshold : TIER4_THRESHOLDS) {
      VMOption byDefault = thisJvm.getVMOption(threshold);
      assertEquals(VMOption.Origin.DEFAULT, byDefault.getOrigin(), "the test JVM runs with the default " + threshold);
      assertEquals(Long.parseLong(byDefault.getValue()) * TIER4_FACTOR, Long.parseLong(flags.get(threshold)), threshold);
    }
    assertTrue(scaling != null, "the crypto provider's scaling is set");
    // The per-method scaling multiplies the thresholds above: AES-GCM reaches C2 as early as before.
    assertEquals(0.05, Double.parseDouble(scaling) * TIER4_FACTOR, 0.0005, "crypto provider scaling " + scaling);
  }

  /** How many times the JVM's default counts a method waits before C2 compiles it (java.options). */
  static final long TIER4_FACTOR = 30;

  @Test
  void theArtifactCacheIsTheOnlyWritableDirectoryTheImagePrepares() {
    String cache = dockerfile.env().get("INPLACE_ARTIFACT_CACHE");
    assertTrue(cache != null && cache.startsWith("/"), "INPLACE_ARTIFACT_CACHE is set to an absolute path");
    assertEquals(
        List.of("mkdir -p " + cache + " && chown " + dockerfile.last("USER") + " " + cache), dockerfile.all("RUN"));
  }

  @Test
  void theParserJoinsContinuationsAndSkipsComments() {
    Dockerfile parsed = Dockerfile.parse("# c\nFROM x\nRUN a \\\n  && b\n\nENTRYPOINT [\"java\", \"-jar\"]\n");
    assertEquals(List.of("a  && b"), parsed.all("RUN"));
    assertEquals(List.of("java", "-jar"), parsed.entrypoint());
  }
}
