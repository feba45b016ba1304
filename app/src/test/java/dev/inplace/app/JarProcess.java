package dev.inplace.app;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a command line to its end (or 60 s) with exactly the given environment. */
record JarProcess(int exit, String out, String err) {
  static Path jar() {
    Path jar = Path.of(System.getProperty("inplace.jar", "target/inplace.jar"));
    if (!Files.isRegularFile(jar)) {
      throw new AssertionError("no " + jar + ": run `mvn -B -pl app -am verify` (the jar is built by package)");
    }
    return jar;
  }

  static JarProcess run(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
    Path out = Files.createTempFile("inplace-out-", ".txt");
    Path err = Files.createTempFile("inplace-err-", ".txt");
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
      builder.environment().clear(); // `java` is still found: the JDK looks it up on the parent's PATH
      builder.environment().putAll(env);
      Process process = builder.start();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(command + " did not end within 60 s");
      }
      return new JarProcess(
          process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  @Override
  public String toString() {
    return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
  }
}
