package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code hosts scan NS/NAME}: collects the cluster's SSH host keys and pins the confirmed ones. */
@Command(name = "hosts", description = "Collect and pin the SSH host keys of a cluster's Machines (docs/host-keys.md).",
    subcommands = {HostsCommand.Scan.class, BootstrapSnippetCommand.class})
final class HostsCommand {
  @Mixin InplaceCli.HelpOption help;

  @Command(name = "scan", description = {
      "Read each Machine's SSH host keys (at the first InternalIP, else ExternalIP, of status.addresses),",
      "show their SHA256 fingerprints and write the keys a trust source confirms to the cluster's",
      "known_hosts Secret (data key known_hosts; other hosts' lines are kept). Sources: --expect or",
      "--expect-file (fingerprints you checked on the hosts), --from-node-annotations (keys each node",
      "published with its own credentials: deploy/bootstrap), or your yes at a terminal. A key no source",
      "confirms is never written: one unconfirmed, mismatched or silent host and nothing is (exit 1)."})
  static final class Scan implements Callable<Integer> {
    private static final java.util.regex.Pattern SECRET_NAME = java.util.regex.Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    private final CliContext context;
    @Spec CommandLine.Model.CommandSpec spec;
    @Mixin InplaceCli.HelpOption help;

    @Parameters(index = "0", paramLabel = "NS/NAME", description = "The CAPI Cluster, e.g. fleet/edge-1.")
    String cluster;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "The management cluster's kubeconfig.")
    String kubeconfig;

    @Option(names = "--secret", paramLabel = "SECRET",
        description = "The known_hosts Secret in the cluster's namespace (default <cluster>-known-hosts, as the extension's).")
    String secret;

    @Option(names = "--ssh-port", paramLabel = "PORT", defaultValue = "22", description = "SSH port of the hosts (default 22).")
    int port;

    @Option(names = "--machine", paramLabel = "MACHINE", description = "Scan only this Machine (repeatable; other hosts' lines are kept).")
    List<String> machines = new ArrayList<>();

    @Option(names = "--expect", paramLabel = "HOST=SHA256:...",
        description = "A fingerprint checked on the host (ssh-keygen -lf); HOST is a Machine, Node or address. Repeatable.")
    List<String> expect = new ArrayList<>();

    @Option(names = "--expect-file", paramLabel = "FILE", description = "HOST=SHA256:... lines (# comments allowed).")
    Path expectFile;

    @Option(names = "--from-node-annotations",
        description = "Trust a key only if the host's Node published it (annotation " + NodePublishedKeys.ANNOTATION + ").")
    boolean fromNodeAnnotations;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s", converter = Converters.Seconds.class,
        description = "Bound of each host's connect and key exchange (default 10s).")
    long timeoutSeconds;

    Scan(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      ClusterRef ref = Converters.clusterArgument(spec.commandLine(), cluster);
      String secretName = secret == null ? ref.name() + "-known-hosts" : secret;
      if (!SECRET_NAME.matcher(secretName).matches()) {
        throw new CliException("--secret must be a Secret name (lower case, digits, '-', '.'), got '" + secretName + "'");
      }
      if (port < 1 || port > 65535) {
        throw new CliException("--ssh-port must be 1..65535, got " + port);
      }
      if (timeoutSeconds < 1) {
        throw new CliException("--timeout must be at least 1s");
      }
      boolean expecting = !expect.isEmpty() || expectFile != null;
      if (expecting && fromNodeAnnotations) {
        throw new CliException("--expect/--expect-file and --from-node-annotations are two trust sources: give one");
      }
      ExpectedFingerprints expected = expecting ? ExpectedFingerprints.parse(expect, expectFile) : null;

      KubernetesClient management = context.kubernetes(kubeconfig);
      List<ClusterHosts.Host> hosts = ClusterHosts.read(management, ref, machines);
      if (expected != null && !expected.unmatchedNames(hosts).isEmpty()) {
        throw new HostsScanRefused("--expect names " + String.join(", ", expected.unmatchedNames(hosts))
            + ", which is no Machine, Node or address of the hosts scanned; nothing written");
      }
      HostKeyTrust trust = expected != null ? expected
          : fromNodeAnnotations ? NodePublishedKeys.read(management, ref, hosts) : null;
      KnownHostsSecret target = new KnownHostsSecret(management, ref.namespace(), secretName);

      HostKeyScanner scanner = new HostKeyScanner(Duration.ofSeconds(timeoutSeconds));
      Map<ClusterHosts.Host, List<HostKey>> shown = new LinkedHashMap<>();
      Map<ClusterHosts.Host, String> problems = new LinkedHashMap<>();
      Map<ClusterHosts.Host, List<HostKey>> trusted = new LinkedHashMap<>();
      for (ClusterHosts.Host host : hosts) {
        try {
          shown.put(host, scanner.scan(host.address(), port));
        } catch (HostKeyScanner.Unreachable e) {
          problems.put(host, e.getMessage());
          continue;
        }
        if (trust != null) {
          HostKeyTrust.Decision decision = trust.decide(host, shown.get(host));
          if (decision.refused()) {
            problems.put(host, decision.refusal());
          } else {
            trusted.put(host, decision.trusted());
          }
        }
      }
      print(shown, trusted, problems, trust);
      if (!problems.isEmpty()) {
        throw new HostsScanRefused(problems.size() + " of " + hosts.size() + " hosts not confirmed; nothing written to "
            + target.describe());
      }
      if (trust == null) {
        trusted.putAll(shown);
        if (!confirmedAtTerminal(shown, target)) {
          throw new HostsScanRefused("no source confirms these keys (no --expect, --expect-file or"
              + " --from-node-annotations, and no yes at a terminal); nothing written to " + target.describe());
        }
      }
      Secret existing = target.read();
      Set<String> replaced = new LinkedHashSet<>();
      List<String> lines = new ArrayList<>();
      trusted.forEach((host, keys) -> {
        replaced.add(KnownHostsText.hostPattern(host.address(), port));
        keys.forEach(k -> lines.add(k.knownHostsLine(host.address(), port)));
      });
      target.write(existing, replaced, lines);
      context.out.println("wrote " + lines.size() + " host key(s) of " + trusted.size() + " host(s) to "
          + target.describe() + " (data key known_hosts), confirmed by "
          + (trust == null ? "the operator at the terminal" : trust.name()));
      return CliErrors.OK;
    }

    /** Asks at the terminal; false when there is none or the answer is not yes. */
    private boolean confirmedAtTerminal(Map<ClusterHosts.Host, List<HostKey>> shown, KnownHostsSecret target) {
      int keys = shown.values().stream().mapToInt(List::size).sum();
      return context.ask("Compare each fingerprint with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub)."
              + " Pin these " + keys + " key(s) of " + shown.size() + " host(s) in " + target.describe() + "? [yes/no] ")
          .map(answer -> answer.trim().toLowerCase(Locale.ROOT))
          .filter(answer -> answer.equals("yes") || answer.equals("y"))
          .isPresent();
    }

    private void print(Map<ClusterHosts.Host, List<HostKey>> shown, Map<ClusterHosts.Host, List<HostKey>> trusted,
        Map<ClusterHosts.Host, String> problems, HostKeyTrust trust) {
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"MACHINE", "NODE", "ADDRESS", "TYPE", "FINGERPRINT", "TRUST"});
      shown.forEach((host, keys) -> keys.forEach(k -> rows.add(new String[] {host.machine(), host.node(),
          KnownHostsText.hostPattern(host.address(), port), k.type(), k.fingerprint(),
          trust == null ? "ask" : trusted.getOrDefault(host, List.of()).contains(k) ? "confirmed" : "-"})));
      printColumns(rows);
      problems.forEach((host, why) -> context.out.println("not confirmed: " + host.machine() + " (" + host.address() + "): " + why));
    }

    private void printColumns(List<String[]> rows) {
      int[] width = new int[rows.get(0).length];
      rows.forEach(row -> {
        for (int c = 0; c < row.length; c++) {
          width[c] = Math.max(width[c], row[c].length());
        }
      });
      for (String[] row : rows) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < row.length; c++) {
          line.append(c == row.length - 1 ? row[c] : String.format("%-" + (width[c] + 2) + "s", row[c]));
        }
        context.out.println(line.toString().stripTrailing());
      }
    }
  }
}
