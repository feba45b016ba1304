package dev.inplace.sandbox.deploy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** deploy/ rendered by the test bed's {@code kubectl kustomize}, as {@code kubectl apply -k} would apply it. */
final class Kustomize {
  static final Path DEPLOY = Path.of("..", "deploy");
  /** Every directory a user applies with {@code kubectl apply -k}. */
  static final List<String> OVERLAYS = List.of("default", "extension", "namespaced");

  private Kustomize() {}

  /** The objects of {@code deploy/<overlay>}; fails clearly when kubectl is missing. */
  static List<HasMetadata> render(String overlay) {
    return render(DEPLOY.resolve(overlay));
  }

  /** The objects of the kustomization in {@code dir}. */
  static List<HasMetadata> render(Path dir) {
    Path out;
    Path err;
    try {
      out = Files.createTempFile("kustomize-", ".yaml");
      err = Files.createTempFile("kustomize-", ".err");
      Process process;
      try {
        // The test bed's own kubectl (docs/testbed.md): nothing on the machine's PATH is relied on.
        String kubectl = dev.inplace.testbed.TestbedBinaries.locate().ensure("kubectl").get(0).toString();
        process = new ProcessBuilder(kubectl, "kustomize", dir.toString())
            .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      } catch (IOException e) {
        throw new AssertionError(
            "the test bed's kubectl did not start (./inplace testbed build kubectl)", e);
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("kubectl kustomize " + dir + " did not finish within 60 s");
      }
      String yaml = Files.readString(out, StandardCharsets.UTF_8);
      if (process.exitValue() != 0) {
        throw new AssertionError("kubectl kustomize " + dir + " failed:\n" + Files.readString(err, StandardCharsets.UTF_8));
      }
      Files.delete(out);
      Files.delete(err);
      return parse(yaml);
    } catch (IOException e) {
      throw new AssertionError("cannot render " + dir, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted rendering " + dir, e);
    }
  }

  static List<HasMetadata> parse(String yaml) {
    List<HasMetadata> objects = new ArrayList<>();
    for (String document : yaml.split("(?m)^---\\s*$")) {
      if (!document.isBlank()) {
        objects.add(Serialization.unmarshal(document, HasMetadata.class));
      }
    }
    return objects;
  }

  static <T extends HasMetadata> List<T> all(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  static <T extends HasMetadata> Optional<T> named(List<HasMetadata> objects, Class<T> type, String name) {
    return all(objects, type).stream().filter(o -> name.equals(o.getMetadata().getName())).findFirst();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type, String name) {
    return named(objects, type, name)
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name + " in the rendered objects"));
  }
}
