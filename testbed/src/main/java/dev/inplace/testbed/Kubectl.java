package dev.inplace.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The test bed's own kubectl and kustomize, run against one kubeconfig: how manifests reach a server. */
public final class Kubectl {
  private final Path kubectl;
  private final Path kustomize;
  private final Path kubeconfig;

  public Kubectl(TestbedBinaries binaries, Path kubeconfig) {
    List<Path> bins = binaries.ensure("kubectl", "kustomize");
    this.kubectl = bins.get(0);
    this.kustomize = bins.get(1);
    this.kubeconfig = kubeconfig;
  }

  /** {@code kustomize build DIR}: the rendered YAML. */
  public String kustomize(Path dir) {
    return run(List.of(kustomize.toString(), "build", dir.toString()), null);
  }

  /** Server-side apply of {@code manifest} (YAML or JSON), as the test bed's field manager; returns kubectl's output. */
  public String apply(String manifest) {
    return kubectl(manifest, "apply", "--server-side", "--force-conflicts", "--field-manager=inplace-testbed", "-f", "-");
  }

  /** Any kubectl command against this kubeconfig; {@code stdin} may be null. */
  public String kubectl(String stdin, String... args) {
    List<String> command = new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", kubeconfig.toString()));
    command.addAll(List.of(args));
    return run(command, stdin);
  }

  private static String run(List<String> command, String stdin) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      if (stdin != null) {
        p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      }
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("timed out: " + String.join(" ", command));
      }
      String text = new String(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", command.subList(0, Math.min(4, command.size())))
            + " exited " + p.exitValue() + ":\n" + text);
      }
      return text;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + command.get(0), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
