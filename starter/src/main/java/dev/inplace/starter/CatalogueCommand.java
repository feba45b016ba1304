package dev.inplace.starter;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.ReleaseCatalogue;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code catalogue add}: a release measured from a mirror and written into the catalogue ConfigMap (docs/catalogue.md). */
@Command(name = "catalogue", description = "Write the release catalogue the worker reads (docs/catalogue.md).",
    subcommands = {CatalogueCommand.Add.class})
final class CatalogueCommand {
  @Mixin InplaceCli.HelpOption help;

  static final String DEFAULT_CONFIGMAP = "default/inplace-releases";
  private static final Pattern KEY = Pattern.compile("[-._a-zA-Z0-9]+");

  @Command(name = "add", description = "Add one release to the catalogue ConfigMap: reads every file the distribution"
      + " needs from --from (a mirror directory or an https location), computes its sha256 and size, and creates the"
      + " ConfigMap or merges the release into it (other releases and keys are kept). The worker's rules are applied"
      + " first: a release the worker would refuse is not written. Writes with your kubeconfig (--kubeconfig, else"
      + " KUBECONFIG, else ~/.kube/config); --dry-run prints the ConfigMap instead.")
  static final class Add implements Callable<Integer> {
    private final CliContext context;
    @Mixin RunCommands.OutputOption format;

    @Option(names = "--distribution", required = true, paramLabel = "D", converter = Converters.DistributionName.class,
        completionCandidates = Converters.Distributions.class, description = "${COMPLETION-CANDIDATES}.")
    Distribution distribution;

    @Option(names = "--os", paramLabel = "OS", defaultValue = "standard",
        description = "The hosts' OS: standard (default), or kairos: one OS image, the mirror's kairos-os-image.tar.")
    String os;

    @Option(names = "--version", required = true, paramLabel = "V",
        description = "The release: vX.Y.Z+k3sN (k3s), vX.Y.Z (kubeadm), vX.Y.Z+k0s.N (k0s).")
    String version;

    @Option(names = "--arch", paramLabel = "ARCH", defaultValue = "amd64", description = "Node architecture (default ${DEFAULT-VALUE}).")
    String arch;

    @Option(names = "--from", required = true, paramLabel = "DIR|URL",
        description = "A directory holding the release's files, or the https location they are downloaded from.")
    String from;

    @Option(names = "--mirror-path", paramLabel = "PATH",
        description = "Where the worker sees the --from directory (below its INPLACE_ARTIFACT_MIRROR_DIR); default: the same path.")
    String mirrorPath;

    @Option(names = "--artifact-hosts", paramLabel = "HOST", split = ",",
        description = "The worker's INPLACE_ARTIFACT_HOSTS; default: the distributions' release hosts.")
    List<String> artifactHosts;

    @Option(names = "--binaries-only", description = "Leave out the image archive (nodes that may pull images).")
    boolean binariesOnly;

    @Option(names = "--configmap", paramLabel = "NS/NAME", defaultValue = DEFAULT_CONFIGMAP,
        converter = Converters.Cluster.class,
        description = "The catalogue ConfigMap, in the namespace of the clusters that use it (default ${DEFAULT-VALUE}).")
    ClusterRef configMap;

    @Option(names = "--key", paramLabel = "KEY", defaultValue = "catalogue.json",
        description = "The ConfigMap's data key (the resources' releaseCatalogue.key; default ${DEFAULT-VALUE}).")
    String key;

    @Option(names = "--replace", description = "Replace a release of the same version, distribution, arch and OS whose files differ.")
    boolean replace;

    @Option(names = "--dry-run", description = "Print the ConfigMap that would be written (-o yaml by default) and write nothing.")
    boolean dryRun;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "The management cluster's kubeconfig.")
    String kubeconfig;

    Add(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      HostOs hostOs = hostOs();
      if (!KEY.matcher(key).matches()) {
        throw new CliException("--key must be made of [-._a-zA-Z0-9], got '" + key + "'");
      }
      List<ReleaseFiles.Wanted> wanted;
      try {
        wanted = ReleaseFiles.of(distribution, hostOs, version, arch, binariesOnly);
      } catch (IllegalArgumentException e) {
        throw new CliException(e.getMessage());
      }
      ReleaseCatalogue.Release release = new ReleaseCatalogue.Release(version, distribution, arch, measure(wanted), hostOs);
      ArtifactRules.problem(release.artifacts(), distribution, hostOs).ifPresent(problem -> {
        throw new CommandRefused("the worker would refuse this release: " + problem);
      });
      KubernetesClient management = context.kubernetes(kubeconfig);
      String ns = configMap.namespace();
      String name = configMap.name();
      ConfigMap existing = read(() -> management.configMaps().inNamespace(ns).withName(name).get(), ns, name);
      CatalogueConfigMap.Merged merged = CatalogueConfigMap.merge(existing, ns, name, key, release, replace);
      if (!dryRun && merged.change() != CatalogueConfigMap.Change.UNCHANGED) {
        ConfigMap toWrite = merged.configMap();
        read(() -> existing == null ? management.configMaps().resource(toWrite).create()
            : management.configMaps().resource(toWrite).update(), ns, name);
      }
      Output output = dryRun && format.output == Output.table ? Output.yaml : format.output;
      output.print(context.out, merged.configMap(), cm -> summary(context.out, merged, release));
      return CliErrors.OK;
    }

    private HostOs hostOs() {
      try {
        return HostOs.parse(os);
      } catch (IllegalArgumentException e) {
        throw new CliException("--os: " + e.getMessage());
      }
    }

    /** Every wanted file measured from the mirror; the first missing one refuses the command. */
    private List<Artifact> measure(List<ReleaseFiles.Wanted> wanted) {
      ReleaseMirror mirror = mirror();
      List<Artifact> artifacts = new ArrayList<>();
      for (ReleaseFiles.Wanted w : wanted) {
        Optional<ReleaseMirror.Measured> found = Optional.empty();
        String fileName = null;
        for (String candidate : w.fileNames()) {
          try {
            found = mirror.measure(candidate);
          } catch (IOException e) {
            throw new CommandRefused("cannot read " + candidate + " from " + mirror.describe() + ": " + CliErrors.rootMessage(e));
          }
          if (found.isPresent()) {
            fileName = candidate;
            break;
          }
        }
        if (found.isEmpty()) {
          throw new CommandRefused(mirror.describe() + " has no " + w.name() + " for " + distribution.name().toLowerCase(Locale.ROOT)
              + " " + version + " " + arch + ": expected " + (w.fileNames().size() == 1 ? "" : "one of ")
              + String.join(", ", w.fileNames())
              + (w.kind() == dev.inplace.workflows.api.ArtifactKind.IMAGE_ARCHIVE ? " (or pass --binaries-only)" : ""));
        }
        ReleaseMirror.Measured m = found.get();
        artifacts.add(new Artifact(w.name(), w.kind(), m.source(), m.sha256(), m.sizeBytes(), w.installPath(fileName), w.mode()));
      }
      return artifacts;
    }

    private ReleaseMirror mirror() {
      if (from.contains("://")) {
        if (mirrorPath != null) {
          throw new CliException("--mirror-path is for a --from directory, not a URL");
        }
        Set<String> hosts = artifactHosts == null || artifactHosts.isEmpty() ? ArtifactRules.RELEASE_HOSTS
            : artifactHosts.stream().map(h -> h.trim().toLowerCase(Locale.ROOT)).filter(h -> !h.isEmpty())
                .collect(Collectors.toSet());
        return new HttpsMirror(from, hosts, context.http());
      }
      return new DirectoryMirror(Path.of(from), mirrorPath);
    }

    private static <T> T read(java.util.function.Supplier<T> call, String ns, String name) {
      try {
        return call.get();
      } catch (KubernetesClientException e) {
        if (e.getCode() <= 0) {
          throw e; // no answer: exit 3 (CliErrors), as the views
        }
        throw new CommandRefused("ConfigMap " + ns + "/" + name + ": " + (e.getCode() == 409
            ? "changed while this command ran; run it again"
            : "HTTP " + e.getCode() + (e.getStatus() == null ? "" : " " + e.getStatus().getMessage())));
      }
    }
  }

  private static void summary(PrintStream out, CatalogueConfigMap.Merged merged, ReleaseCatalogue.Release release) {
    ConfigMap cm = merged.configMap();
    out.println("configmap " + cm.getMetadata().getNamespace() + "/" + cm.getMetadata().getName() + ": "
        + merged.change().name().toLowerCase(Locale.ROOT) + " " + CatalogueConfigMap.label(release));
    for (Artifact a : release.artifacts()) {
      out.println("  " + a.name() + "  " + a.sizeBytes() + " bytes  sha256 " + a.sha256() + "  " + a.source()
          + " -> " + a.installPath());
    }
  }
}
