package dev.inplace.starter;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/**
 * The command reference of docs/cli.md, generated from the picocli model: every command's usage
 * help in tree order. CliReferenceTest fails when the committed copy differs.
 */
final class CliReference {
  static final String BEGIN = "<!-- BEGIN GENERATED: CliReference (do not edit by hand) -->";
  static final String END = "<!-- END GENERATED -->";

  private CliReference() {}

  /** The generated block, markers included. */
  static String markdown() {
    PrintStream discard = new PrintStream(PrintStream.nullOutputStream(), true, StandardCharsets.UTF_8);
    CommandLine root = InplaceCli.commandLine(CliContext.of(null, "inplace", discard, 0), discard);
    StringBuilder md = new StringBuilder(BEGIN).append("\n");
    append(md, root);
    return md.append(END).append("\n").toString();
  }

  private static void append(StringBuilder md, CommandLine command) {
    StringWriter usage = new StringWriter();
    command.usage(new PrintWriter(usage), CommandLine.Help.Ansi.OFF);
    md.append("\n### `").append(command.getCommandSpec().qualifiedName()).append("`\n\n```text\n")
        .append(usage.toString().stripTrailing().replaceAll("(?m)[ \\t]+$", "")).append("\n```\n");
    for (CommandLine sub : command.getSubcommands().values()) {
      if (!sub.getCommandSpec().usageMessage().hidden() && !sub.getCommandName().equals("help")) {
        append(md, sub);
      }
    }
  }
}
