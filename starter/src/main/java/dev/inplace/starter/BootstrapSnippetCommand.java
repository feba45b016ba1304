package dev.inplace.starter;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code hosts bootstrap-snippet KIND}: the YAML that makes new nodes publish their host keys. */
@Command(name = "bootstrap-snippet", description = {
    "Print the bootstrap config fields (files, and the command run after the node joined) that make",
    "each new node publish its SSH host public keys on its own Node with its kubelet credentials, for",
    "hosts scan --from-node-annotations. Copies: deploy/bootstrap/."})
final class BootstrapSnippetCommand implements Callable<Integer> {
  private final CliContext context;
  @Mixin InplaceCli.HelpOption help;

  @Parameters(index = "0", paramLabel = "KIND", description = "kubeadm (KubeadmConfig), k3s (KThreesConfig) or k0s (K0sWorkerConfig).")
  BootstrapSnippet.Kind kind;

  BootstrapSnippetCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    context.out.print(BootstrapSnippet.yaml(kind));
    context.out.flush();
    return CliErrors.OK;
  }
}
