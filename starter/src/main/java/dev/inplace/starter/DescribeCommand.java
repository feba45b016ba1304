package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.client.KubernetesClient;
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

/** {@code describe cluster NS/NAME}: the cluster's tree as {@code clusterctl describe} draws it, plus the in-place state. */
@Command(name = "describe", description = "Show a cluster's objects and where its in-place upgrade stands.",
    subcommands = {DescribeCommand.Cluster.class})
final class DescribeCommand {
  @Mixin InplaceCli.HelpOption help;

  @Command(name = "cluster", description = {
      "Cluster -> control plane -> MachineDeployments -> Machines; each Machine with its version, node Ready,",
      "cordon, in-place phase, step and run ID; then the ControlPlaneUpgrade/WorkersUpgrade CRs and conditions.",
      "Read-only. Reads the management cluster with your kubeconfig (--kubeconfig, else KUBECONFIG, else",
      "~/.kube/config) and the nodes through the cluster's <cluster>-kubeconfig Secret."})
  static final class Cluster implements Callable<Integer> {
    private final CliContext context;
    @Spec CommandLine.Model.CommandSpec spec;
    @Mixin RunCommands.OutputOption format;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "The management cluster's kubeconfig.")
    String kubeconfig;

    @Parameters(index = "0", paramLabel = "NS/NAME", description = "The CAPI Cluster, e.g. default/demo.")
    String cluster;

    Cluster(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      ClusterRef ref = Converters.clusterArgument(spec.commandLine(), cluster);
      KubernetesClient management = context.kubernetes(kubeconfig);
      ClusterTree tree = new ClusterDescriber(management).describe(ref.namespace(), ref.name());
      format.output.print(context.out, tree, t -> printTree(context.out, t));
      return CliErrors.OK;
    }
  }

  /** The table: one row per object, indented as a tree; then the CRs and their conditions. */
  static void printTree(PrintStream out, ClusterTree t) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"NAME", "VERSION", "NODE", "READY", "CORDONED", "INPLACE", "STEP", "RUN"});
    rows.add(new String[] {"Cluster/" + t.namespace() + "/" + t.name() + (t.phase() == null ? "" : " (" + t.phase() + ")"),
        "", "", "", "", "", "", ""});
    boolean hasPools = !t.machineDeployments().isEmpty();
    if (t.controlPlane() != null) {
      ClusterTree.ControlPlane cp = t.controlPlane();
      rows.add(new String[] {(hasPools ? "├─" : "└─") + cp.kind() + "/" + cp.name() + replicas(cp.readyReplicas(), cp.replicas()),
          dash(cp.version()), "", "", "", "", "", ""});
      machines(rows, hasPools ? "│ " : "  ", cp.machines());
    }
    for (int i = 0; i < t.machineDeployments().size(); i++) {
      ClusterTree.Pool pool = t.machineDeployments().get(i);
      boolean last = i == t.machineDeployments().size() - 1;
      rows.add(new String[] {(last ? "└─" : "├─") + "MachineDeployment/" + pool.name() + replicas(pool.readyReplicas(), pool.replicas()),
          dash(pool.version()), "", "", "", "", "", ""});
      machines(rows, last ? "  " : "│ ", pool.machines());
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
    if (t.workloadError() != null) {
      out.println("nodes unknown: " + t.workloadError());
    }
    for (ClusterTree.Upgrade u : t.upgrades()) {
      out.println();
      out.println(u.kind() + "/" + u.name() + "  " + dash(u.version()) + "  " + dash(u.phase())
          + (u.progress() == null ? "" : "  " + u.progress()) + (u.message() == null ? "" : "  " + u.message()));
      for (ClusterTree.Condition c : u.conditions()) {
        out.println("  " + c.type() + "=" + c.status() + (c.reason() == null ? "" : "  " + c.reason())
            + (c.message() == null ? "" : "  " + c.message()));
      }
    }
  }

  private static void machines(List<String[]> rows, String indent, List<ClusterTree.Machine> machines) {
    for (int i = 0; i < machines.size(); i++) {
      ClusterTree.Machine m = machines.get(i);
      rows.add(new String[] {indent + (i == machines.size() - 1 ? "└─" : "├─") + "Machine/" + m.name(),
          dash(m.version()), dash(m.node()), yesNo(m.nodeReady(), "True", "False"), yesNo(m.cordoned(), "yes", "no"),
          dash(m.inplacePhase()), dash(m.step()), dash(m.runId())});
    }
  }

  private static String replicas(Long ready, Long total) {
    return total == null ? "" : " (" + (ready == null ? 0 : ready) + "/" + total + ")";
  }

  private static String yesNo(Boolean b, String yes, String no) {
    return b == null ? "?" : b ? yes : no;
  }

  private static String dash(String s) {
    return s == null || s.isEmpty() ? "-" : s;
  }
}
