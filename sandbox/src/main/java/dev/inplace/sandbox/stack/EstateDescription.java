package dev.inplace.sandbox.stack;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.workflows.api.SshSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What the estate process tells the others about itself, in {@code estate.json}: written last, once
 * every server answers, so its presence means the estate is ready. Holds no secret (the SSH key and
 * known_hosts are in Secrets on the management API server, as in production).
 */
public record EstateDescription(
    long pid,
    String namespace,
    String cluster,
    String distribution,
    String fromVersion,
    String toVersion,
    String managementKubeconfig,
    String workloadKubeconfig,
    String catalogue,
    String controlUrl,
    SshSettings ssh,
    List<String> pools,
    List<Estate.EstateNode> nodes) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Writes atomically: a reader sees the whole description or none. */
  public void write(Path file) {
    try {
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      JSON.writerWithDefaultPrettyPrinter().writeValue(tmp.toFile(), this);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  public static EstateDescription read(Path file) {
    try {
      return JSON.readValue(file.toFile(), EstateDescription.class);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the estate description " + file, e);
    }
  }
}
