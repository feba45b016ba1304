package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReleaseCatalogueTest {
  private static final String SHA = "0123456789abcdef".repeat(4);

  @TempDir Path dir;

  private Path write(String json) throws Exception {
    return Files.writeString(dir.resolve("catalogue.json"), json);
  }

  private static ReleaseCatalogue read(Path file) throws Exception {
    return ReleaseCatalogue.parse(Files.readString(file), file.toString());
  }

  private static String release(String version, String sha) {
    return """
        {"version":"%s","distribution":"K3S","arch":"amd64","artifacts":[
          {"name":"k3s","kind":"BINARY","source":"/srv/k3s","sha256":"%s","sizeBytes":10,
           "installPath":"/usr/local/bin/k3s","mode":"0755"}]}"""
        .formatted(version, sha);
  }

  @Test
  void findsTheReleaseOfAVersion() throws Exception {
    Path file = write("{\"releases\":[" + release("v1.30.4+k3s1", SHA) + "," + release("v1.31.2+k3s1", SHA) + "]}");

    ReleaseCatalogue.Release release = read(file).find("v1.31.2+k3s1", Distribution.K3S, "amd64");

    assertEquals("k3s", release.artifacts().get(0).name());
    assertEquals(ArtifactKind.BINARY, release.artifacts().get(0).kind());
  }

  @Test
  void anUnknownVersionListsWhatTheCatalogueHas() throws Exception {
    Path file = write("{\"releases\":[" + release("v1.30.4+k3s1", SHA) + "]}");

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> read(file).find("v1.31.2+k3s1", Distribution.K3S, "amd64"));

    assertTrue(e.getMessage().contains("v1.30.4+k3s1"), e.getMessage());
  }

  @Test
  void aMalformedDigestIsRejectedWithTheFileName() throws Exception {
    Path file = write("{\"releases\":[" + release("v1.31.2+k3s1", "not-a-digest") + "]}");

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> read(file));

    assertTrue(e.getMessage().contains("catalogue.json") && e.getMessage().contains("sha256"), e.getMessage());
  }

  @Test
  void anUnknownFieldIsRejectedRatherThanIgnored() throws Exception {
    Path file = write("{\"releases\":[],\"relaeses\":[]}");

    assertThrows(IllegalArgumentException.class, () -> read(file));
  }
}
