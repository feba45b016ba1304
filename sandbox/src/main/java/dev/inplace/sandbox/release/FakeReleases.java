package dev.inplace.sandbox.release;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.KubeVersion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox's k3s releases: generates fake artifacts per version under an artifacts directory and
 * writes the release catalogue ({@value #CATALOGUE_FILE}) that tooling reads.
 *
 * <p>Layout: {@code <artifactsDir>/<version>/k3s} and {@code
 * <artifactsDir>/<version>/k3s-airgap-images-amd64.tar}. Not thread-safe; build it once.
 */
public final class FakeReleases {
  private static final Logger LOG = LoggerFactory.getLogger(FakeReleases.class);

  public static final String CATALOGUE_FILE = "releases.json";
  public static final String BINARY_NAME = "k3s";
  public static final String IMAGES_NAME = "k3s-airgap-images";
  public static final String IMAGES_FILE = "k3s-airgap-images-amd64.tar";
  public static final String ARCH = "amd64";

  private final Path artifactsDir;
  private final FakeReleaseSizes sizes;
  // Keyed by the version text; ordered by Kubernetes version order, then text (pre-releases).
  private final Map<String, FakeRelease> releases =
      new TreeMap<>(
          Comparator.comparing(FakeReleases::parse).thenComparing(Comparator.naturalOrder()));

  public FakeReleases(Path artifactsDir, FakeReleaseSizes sizes) {
    this.artifactsDir = artifactsDir.toAbsolutePath();
    this.sizes = sizes;
  }

  public Path artifactsDir() {
    return artifactsDir;
  }

  /** Generates (or regenerates, identically) the artifacts of {@code version}. */
  public FakeRelease add(String version) {
    parse(version);
    Path dir = artifactsDir.resolve(version);
    HostProfile layout = HostProfile.k3sDefaults();
    try {
      Path binaryFile = dir.resolve(BINARY_NAME);
      FakeArtifactWriter.Written binary =
          FakeArtifactWriter.writeBinary(binaryFile, version, sizes.binaryBytes());
      Files.setPosixFilePermissions(binaryFile, PosixFilePermissions.fromString("rwxr-xr-x"));
      Path imagesFile = dir.resolve(IMAGES_FILE);
      FakeArtifactWriter.Written images =
          FakeArtifactWriter.writeImageArchive(imagesFile, version, sizes.imagePaddingBytes());
      Files.setPosixFilePermissions(imagesFile, PosixFilePermissions.fromString("rw-r--r--"));
      FakeRelease release =
          new FakeRelease(
              version,
              new Artifact(
                  BINARY_NAME,
                  ArtifactKind.BINARY,
                  binaryFile.toString(),
                  binary.sha256(),
                  binary.sizeBytes(),
                  layout.binDir() + "/k3s",
                  "0755"),
              new Artifact(
                  IMAGES_NAME,
                  ArtifactKind.IMAGE_ARCHIVE,
                  imagesFile.toString(),
                  images.sha256(),
                  images.sizeBytes(),
                  layout.imagesDir()
                      + "/k3s-airgap-images-amd64-"
                      + version.replace('+', '-')
                      + ".tar",
                  "0644"));
      releases.put(version, release);
      LOG.info(
          "fake k3s release {}: binary {} bytes sha256 {}",
          version,
          binary.sizeBytes(),
          binary.sha256());
      return release;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write fake release " + version, e);
    }
  }

  /** The release of {@code version}; it must have been added. */
  public FakeRelease release(String version) {
    parse(version);
    FakeRelease release = releases.get(version);
    if (release == null) {
      throw new NoSuchElementException("no fake release " + version + "; known: " + versions());
    }
    return release;
  }

  /** Known releases, oldest first. */
  public List<FakeRelease> releases() {
    return List.copyOf(releases.values());
  }

  public List<String> versions() {
    return releases.values().stream().map(FakeRelease::version).toList();
  }

  /**
   * Writes {@code <artifactsDir>/releases.json}, oldest first, in the format of the starter's
   * release catalogue: {@code {"releases":[{"version", "distribution", "arch", "artifacts":[{name,
   * kind, source, sha256, sizeBytes, installPath, mode}]}]}}.
   */
  public Path writeCatalogue() {
    List<Map<String, Object>> entries = new ArrayList<>();
    for (FakeRelease release : releases.values()) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("version", release.version());
      entry.put("distribution", Distribution.K3S.name());
      entry.put("arch", ARCH);
      entry.put("artifacts", release.artifacts().stream().map(FakeReleases::toJson).toList());
      entries.add(entry);
    }
    Path file = artifactsDir.resolve(CATALOGUE_FILE);
    try {
      Files.createDirectories(artifactsDir);
      Path tmp = artifactsDir.resolve(CATALOGUE_FILE + ".tmp");
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .writeValue(tmp.toFile(), Map.of("releases", entries));
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write release catalogue " + file, e);
    }
    return file;
  }

  private static Map<String, Object> toJson(Artifact artifact) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", artifact.name());
    json.put("kind", artifact.kind().name());
    json.put("source", artifact.source());
    json.put("sha256", artifact.sha256());
    json.put("sizeBytes", artifact.sizeBytes());
    json.put("installPath", artifact.installPath());
    json.put("mode", artifact.mode());
    return json;
  }

  private static KubeVersion parse(String version) {
    // The version is written into a shell script and a path: accept only the strict form.
    if (version == null
        || !version.startsWith("v")
        || !version.equals(version.strip())
        || !KubeVersion.isValid(version)) {
      throw new IllegalArgumentException(
          "'" + version + "' is not a k3s version like v1.30.4+k3s1");
    }
    return KubeVersion.parse(version);
  }
}
