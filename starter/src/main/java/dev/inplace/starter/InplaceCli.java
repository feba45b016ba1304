package dev.inplace.starter;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The {@code inplace} command line: starts ControlPlaneUpgrade and WorkersUpgrade runs, shows and
 * follows their progress, and sends the operator Updates. Talks to Temporal (client side); the
 * read-only views ({@code describe}) also read the management cluster with the operator's kubeconfig,
 * and {@code hosts scan} writes the confirmed SSH host keys to a cluster's known_hosts Secret.
 * Exit codes: 0 ok, 1 the run failed or the command was refused, 2 usage, 3 cannot connect.
 */
@Command(name = "inplace", versionProvider = InplaceCli.Version.class,
    // Inherited: the footer. Every command mixes in HelpOption (HelpCommand has its own -h).
    scope = CommandLine.ScopeType.INHERIT,
    description = "In-place upgrades of Cluster API clusters, orchestrated by Temporal.",
    subcommands = {
        UpgradeCommand.class,
        RunCommands.Status.class,
        RunCommands.Watch.class,
        RunCommands.Pause.class,
        RunCommands.Resume.class,
        RunCommands.Abort.class,
        RunCommands.Retry.class,
        RunCommands.Skip.class,
        RunCommands.MaxUnavailable.class,
        DescribeCommand.class,
        PlanCommand.class,
        HistoryCommand.class,
        HostsCommand.class,
        CatalogueCommand.class,
        InplaceCli.Completion.class,
        HelpCommand.class},
    footerHeading = "%n",
    footer = {
        "Connection as the temporal CLI: TEMPORAL_ADDRESS (host:port), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,",
        "TEMPORAL_TLS_* or its profile file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE); INPLACE_TASK_QUEUE.",
        "Exit codes: 0 ok; 1 the run failed or the command was refused; 2 usage; 3 cannot connect."})
public final class InplaceCli {
  @Mixin HelpOption help;

  // Root only: `upgrade --version` is the target version.
  @Option(names = {"-V", "--version"}, versionHelp = true, description = "Print the version and exit.")
  boolean version;

  /** Help is laid out for this width everywhere, so docs/cli.md does not depend on the terminal. */
  static final int USAGE_WIDTH = 100;

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs one command against the Temporal cluster in the environment; returns the exit code. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return run(args, System.getenv(), out, err);
  }

  /**
   * As above, with {@code env}. Everything the command prints, on {@code out} and {@code err}, passes
   * {@link RedactingOutputStream}: no credential reaches the terminal, whatever a run or a server said.
   */
  static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    RedactingOutputStream redactedOut = new RedactingOutputStream(out);
    RedactingOutputStream redactedErr = new RedactingOutputStream(err);
    PrintStream cliOut = new PrintStream(redactedOut, true, StandardCharsets.UTF_8);
    PrintStream cliErr = new PrintStream(redactedErr, true, StandardCharsets.UTF_8);
    try (CliContext context = CliContext.fromEnvironment(env, cliOut, cliErr)) {
      return commandLine(context, cliErr).execute(args);
    } finally {
      cliOut.flush();
      cliErr.flush();
      closeQuietly(redactedOut);
      closeQuietly(redactedErr);
    }
  }

  private static void closeQuietly(RedactingOutputStream stream) {
    try {
      stream.close();
    } catch (java.io.IOException e) {
      // The terminal went away: nobody left to print to.
    }
  }

  /** The command tree, wired to {@code context}; usage errors and failures go to {@code err}. */
  static CommandLine commandLine(CliContext context, PrintStream err) {
    CommandLine cl = new CommandLine(new InplaceCli(), new ContextFactory(context));
    cl.setUsageHelpWidth(USAGE_WIDTH);
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.setOut(new PrintWriter(context.out, true, StandardCharsets.UTF_8));
    PrintWriter errors = new PrintWriter(err, true, StandardCharsets.UTF_8);
    cl.setErr(errors);
    cl.setParameterExceptionHandler((ex, args) -> {
      CommandLine where = ex.getCommandLine();
      // An unknown flag is the real mistake even when required options are also missing (picocli
      // checks those first): name the flag.
      if (ex instanceof CommandLine.MissingParameterException && !where.getUnmatchedArguments().isEmpty()) {
        ex = new CommandLine.UnmatchedArgumentException(where, where.getUnmatchedArguments());
      }
      usageError(where, ex.getMessage(), errors);
      CommandLine.UnmatchedArgumentException.printSuggestions(ex, errors);
      return CliErrors.USAGE;
    });
    cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
      int code = CliErrors.exitCode(ex);
      if (code == CliErrors.USAGE) {
        usageError(commandLine, ex.getMessage(), errors);
      } else {
        errors.println("inplace: " + (ex instanceof CliContext.CannotConnectException ? ex.getMessage() : CliErrors.rootMessage(ex)));
      }
      return code;
    });
    return cl;
  }

  /** The error naming what was wrong, then the usage of that one command. */
  private static void usageError(CommandLine where, String message, PrintWriter err) {
    err.println(where.getCommandSpec().qualifiedName() + ": " + message);
    where.usage(err);
  }

  /** {@code completion bash}: the shell completion script, generated from the command tree. */
  @Command(name = "completion", description = {
      "Print a bash completion script (also works in zsh after `autoload -U bashcompinit && bashcompinit`).",
      "Use: source <(inplace completion bash)"})
  static final class Completion implements Runnable {
    @Spec CommandSpec spec;
    @Mixin HelpOption help;

    @Parameters(index = "0", paramLabel = "SHELL", arity = "0..1", defaultValue = "bash", description = "bash (default).")
    String shell;

    @Override
    public void run() {
      if (!shell.equals("bash")) {
        throw new CommandLine.ParameterException(spec.commandLine(), "SHELL must be bash, got '" + shell + "'");
      }
      spec.commandLine().getOut().print(AutoComplete.bash("inplace", spec.root().commandLine()));
      spec.commandLine().getOut().flush();
    }
  }

  /** {@code -h, --help} on every command. */
  static final class HelpOption {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this command's help and exit.")
    boolean help;
  }

  /** The version from the jar's manifest, when there is one. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = InplaceCli.class.getPackage().getImplementationVersion();
      return new String[] {"inplace " + (v == null ? "(development build)" : v)};
    }
  }

  /** Builds commands that take the {@link CliContext} in their constructor; others as usual. */
  private record ContextFactory(CliContext context) implements CommandLine.IFactory {
    @Override
    public <K> K create(Class<K> type) throws Exception {
      try {
        Constructor<K> withContext = type.getDeclaredConstructor(CliContext.class);
        withContext.setAccessible(true);
        return withContext.newInstance(context);
      } catch (NoSuchMethodException e) {
        return CommandLine.defaultFactory().create(type);
      }
    }
  }
}
