package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code history NS/NAME}: a cluster's past runs, newest first. */
@Command(name = "history", description = {
    "List a cluster's upgrade runs, newest first: kind, pool, from -> to version, start, end, result, node counts.",
    "Read-only. Reads the ControlPlaneUpgrade/WorkersUpgrade CRs' status.history (the last 20 runs of each) with",
    "your kubeconfig, and Temporal's visibility (List) for runs started without a CR; a server without List",
    "(Temporal's Java test server) is noted and the CRs are still shown."})
final class HistoryCommand implements Callable<Integer> {
  private final CliContext context;
  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin RunCommands.OutputOption format;

  @Option(names = "--kubeconfig", paramLabel = "FILE", description = "The management cluster's kubeconfig.")
  String kubeconfig;

  @Parameters(index = "0", paramLabel = "NS/NAME", description = "The CAPI Cluster, e.g. fleet/edge-1.")
  String cluster;

  HistoryCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    ClusterRef ref = Converters.clusterArgument(spec.commandLine(), cluster);
    ClusterHistory history = HistoryReader.read(ref.namespace(), ref.name(), () -> context.kubernetes(kubeconfig), context::client);
    format.output.print(context.out, history, h -> printTable(context.out, h));
    return CliErrors.OK;
  }

  static void printTable(PrintStream out, ClusterHistory h) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"STARTED", "FINISHED", "KIND", "POOL", "FROM", "TO", "RESULT", "NODES", "RUN"});
    for (ClusterHistory.Run r : h.runs()) {
      rows.add(new String[] {dash(r.started()), dash(r.finished()), dash(r.kind()), dash(r.machineDeployment()),
          dash(r.fromVersion()), dash(r.toVersion()), dash(r.result()) + (r.reason() == null ? "" : " (" + r.reason() + ")"),
          nodes(r), r.workflowId()});
    }
    int[] width = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int c = 0; c < row.length; c++) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < row.length; c++) {
        line.append(c == row.length - 1 ? row[c] : String.format("%-" + (width[c] + 2) + "s", row[c]));
      }
      out.println(line.toString().stripTrailing());
    }
    if (h.runs().isEmpty()) {
      out.println("no runs found for " + h.namespace() + "/" + h.name());
    }
    if (h.notes() != null) {
      h.notes().forEach(n -> out.println("note: " + n));
    }
  }

  /** upgraded/total, with failed and skipped when there are any; "-" when unknown (Temporal only). */
  private static String nodes(ClusterHistory.Run r) {
    if (r.total() == null) {
      return "-";
    }
    String s = r.upgraded() + "/" + r.total();
    if (r.failed() != null && r.failed() > 0) {
      s += " " + r.failed() + " failed";
    }
    if (r.skipped() != null && r.skipped() > 0) {
      s += " " + r.skipped() + " skipped";
    }
    return s;
  }

  private static String dash(String s) {
    return s == null || s.isEmpty() ? "-" : s;
  }
}
