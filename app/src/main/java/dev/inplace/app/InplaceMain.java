package dev.inplace.app;

import dev.inplace.starter.InplaceCli;
import dev.inplace.worker.WorkerMain;
import java.util.Arrays;

/**
 * {@code java -jar inplace.jar <command>}: {@code worker} runs the worker process; every other
 * command goes to the CLI unchanged. Deliberately thin: each side owns its arguments and usage.
 */
public final class InplaceMain {
  /** The command that runs the worker process (the container image's entrypoint). */
  static final String WORKER = "worker";

  private InplaceMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && WORKER.equals(args[0])) {
      WorkerMain.main(Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    // The CLI prints for people: only warnings from the libraries unless INPLACE_LOG_LEVEL says
    // otherwise (logback reads the level from a system property or the environment).
    if (System.getenv("INPLACE_LOG_LEVEL") == null && System.getProperty("INPLACE_LOG_LEVEL") == null) {
      System.setProperty("INPLACE_LOG_LEVEL", "WARN");
    }
    InplaceCli.main(args);
  }
}
