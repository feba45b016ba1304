package dev.inplace.starter;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** The CLI's entry point for tests outside its package: exit code and what it printed on stderr. */
public final class CliDoor {
  private CliDoor() {}

  public record Outcome(int exitCode, String err) {}

  /** What one command printed: exit code, stdout and stderr. */
  public record Printed(int exitCode, String out, String err) {}

  public static Outcome run(List<String> args, Map<String, String> env) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = InplaceCli.run(args.toArray(String[]::new), env, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Outcome(code, err.toString(StandardCharsets.UTF_8));
  }

  /** As {@link #run}, keeping stdout too. */
  public static Printed print(List<String> args, Map<String, String> env) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = InplaceCli.run(args.toArray(String[]::new), env, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Printed(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
