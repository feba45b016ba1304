package dev.inplace.sandbox.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.StackLayout;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** {@code ./inplace chaos}: exit 0 only if every invariant held, 1 otherwise, 2 for a usage error. */
public final class ChaosMain {
  private ChaosMain() {}

  public static int main(List<String> args, PrintStream out, PrintStream err) throws IOException {
    if (args.contains("--help")) {
      out.print(ChaosOptions.USAGE);
      return 0;
    }
    ChaosOptions options;
    try {
      options = ChaosOptions.parse(args.toArray(String[]::new));
    } catch (IllegalArgumentException e) {
      err.println("inplace chaos: " + e.getMessage());
      err.print(ChaosOptions.USAGE);
      return 2;
    }
    Path dir = Files.createTempDirectory("inplace-chaos-");
    try {
      ChaosSummary summary;
      try {
        summary = ChaosCampaign.run(new StackLayout(dir), options, out);
      } catch (LocalStack.StackException e) {
        err.println("inplace chaos: " + e.getMessage() + " (seed " + options.seed() + ")");
        return 1;
      }
      if (options.json()) {
        out.println(new ObjectMapper().writeValueAsString(summary));
      }
      return summary.passed() ? 0 : 1;
    } finally {
      if (options.keep()) {
        out.println("stack directory kept in " + dir);
      } else {
        LocalStack.deleteTree(dir);
      }
    }
  }
}
