package dev.inplace.sandbox.release;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.HostOs;
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
 * The sandbox's releases of one distribution: generates fake artifacts per version under an
 * artifacts directory and writes the release catalogue ({@value #CATALOGUE_FILE}) that tooling
 * reads.
 *
 * <p>Layout, k3s: {@code <artifactsDir>/<version>/k3s} and {@code
 * <artifactsDir>/<version>/k3s-airgap-images-amd64.tar}; kubeadm: {@code kubelet}, {@code kubeadm},
 * {@code kubectl} and {@code kubernetes-images-amd64.tar}. Not thread-safe; build it once.
 */
public final class FakeReleases {
  private static final Logger LOG = LoggerFactory.getLogger(FakeReleases.class);

  public static final String CATALOGUE_FILE = "releases.json";
  public static final String BINARY_NAME = "k3s";
  public static final String IMAGES_NAME = "k3s-airgap-images";
  public static final String IMAGES_FILE = "k3s-airgap-images-amd64.tar";
  public static final String ARCH = "amd64";
  /** kubeadm releases: the kubelet first (it reports the node's version), then kubeadm and kubectl. */
  public static final List<String> KUBEADM_BINARIES = List.of("kubelet", "kubeadm", "kubectl");
  public static final String KUBERNETES_IMAGES_NAME = "kubernetes-images";
  public static final String KUBERNETES_IMAGES_FILE = "kubernetes-images-amd64.tar";
  public static final String K0S_BINARY_NAME = "k0s";
  public static final String K0S_BUNDLE_NAME = "k0s-airgap-bundle";

  /** The OS image artifact of a Kairos release. */
  public static final String OS_IMAGE_NAME = "os-image";
  /** The registry host the sandbox's OS image references name (served from {@code registry/}). */
  public static final String REGISTRY_HOST = "registry.sandbox.local";

  private final Path artifactsDir;
  private final FakeReleaseSizes sizes;
  private final Distribution distribution;
  private final HostOs os;
  private final Map<String, Artifact> osImages = new java.util.HashMap<>();
  private final Map<String, Artifact> osArchives = new java.util.HashMap<>();
  // Keyed by the version text; ordered by Kubernetes version order, then text (pre-releases).
  private final Map<String, FakeRelease> releases =
      new TreeMap<>(
          Comparator.comparing(FakeReleases::parse).thenComparing(Comparator.naturalOrder()));

  /** k3s releases. */
  public FakeReleases(Path artifactsDir, FakeReleaseSizes sizes) {
    this(artifactsDir, sizes, Distribution.K3S);
  }

  public FakeReleases(Path artifactsDir, FakeReleaseSizes sizes, Distribution distribution) {
    this(artifactsDir, sizes, distribution, HostOs.STANDARD);
  }

  /**
   * Releases for hosts of {@code os}: on Kairos each version also gets an OS image (the
   * distribution's binary in an image root filesystem), served by the sandbox's registry directory.
   */
  public FakeReleases(Path artifactsDir, FakeReleaseSizes sizes, Distribution distribution, HostOs os) {
    this.artifactsDir = artifactsDir.toAbsolutePath();
    this.sizes = sizes;
    this.distribution = distribution;
    this.os = HostOs.orStandard(os);
  }

  public HostOs os() {
    return os;
  }

  /** The directory the sandbox's registry serves OS image archives from, as {@code <sha256>.tar}. */
  public Path registryDir() {
    return artifactsDir.resolve("registry");
  }

  /** The OS image of {@code version} as the host pulls it ({@code oci:...@sha256:...}); Kairos only. */
  public Artifact osImage(String version) {
    return requireKairos(osImages, version);
  }

  /** The OS image of {@code version} as an archive the worker stages (air-gapped sites); Kairos only. */
  public Artifact osImageArchive(String version) {
    return requireKairos(osArchives, version);
  }

  private Artifact requireKairos(Map<String, Artifact> images, String version) {
    Artifact a = images.get(version);
    if (a == null) {
      throw new NoSuchElementException("no Kairos OS image " + version + " (releases for " + os.cliName() + " hosts)");
    }
    return a;
  }

  /**
   * A Kairos OS image of {@code release}: a tar of a root filesystem holding the release's binaries
   * in {@code /usr/local/bin} and {@code /etc/kairos-release}, written reproducibly, and copied into
   * the registry directory under its digest.
   */
  private void addOsImage(FakeRelease release) throws IOException {
    Path dir = artifactsDir.resolve(release.version());
    Path rootfs = dir.resolve("kairos-rootfs");
    Files.createDirectories(rootfs.resolve("usr/local/bin"));
    Files.createDirectories(rootfs.resolve("etc"));
    for (Artifact binary : release.binaries()) {
      Path to = rootfs.resolve("usr/local/bin").resolve(binary.name());
      Files.copy(Path.of(binary.source()), to, StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Files.writeString(rootfs.resolve("etc/kairos-release"),
        "KAIROS_NAME=\"kairos-sandbox\"\nKAIROS_VERSION=\"" + release.version() + "\"\n");
    Path archive = dir.resolve("kairos-os-image.tar");
    Process tar = new ProcessBuilder("tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner",
        "-cf", archive.toString(), "-C", rootfs.toString(), ".").redirectErrorStream(true).start();
    String out = new String(tar.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    try {
      if (tar.waitFor() != 0) {
        throw new IOException("tar failed: " + out);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted writing " + archive, e);
    }
    String sha = FileSha256.of(archive);
    long size = Files.size(archive);
    Files.createDirectories(registryDir());
    Files.copy(archive, registryDir().resolve(sha + ".tar"), StandardCopyOption.REPLACE_EXISTING);
    String repo = "kairos/" + distribution.name().toLowerCase(java.util.Locale.ROOT);
    String tag = release.version().replace('+', '-');
    osImages.put(release.version(), new Artifact(OS_IMAGE_NAME, ArtifactKind.OS_IMAGE,
        "oci:" + REGISTRY_HOST + "/" + repo + ":" + tag + "@sha256:" + sha, sha, size,
        ArtifactRules.KAIROS_ACTIVE_IMAGE, "0644"));
    osArchives.put(release.version(), new Artifact(OS_IMAGE_NAME, ArtifactKind.OS_IMAGE, archive.toString(), sha, size,
        ArtifactRules.KAIROS_ACTIVE_IMAGE, "0644"));
  }

  public Distribution distribution() {
    return distribution;
  }

  public Path artifactsDir() {
    return artifactsDir;
  }

  /** Generates (or regenerates, identically) the artifacts of {@code version}. */
  public FakeRelease add(String version) {
    FakeRelease release = addStandard(version);
    if (os == HostOs.KAIROS) {
      try {
        addOsImage(release);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the Kairos OS image of " + version, e);
      }
    }
    return release;
  }

  private FakeRelease addStandard(String version) {
    parse(version);
    if (distribution == Distribution.KUBEADM) {
      return addKubeadm(version);
    }
    if (distribution == Distribution.K0S) {
      return addK0s(version);
    }
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

  /**
   * kubelet (the full binary size), kubeadm and kubectl (half of it each) into the profile's bin
   * dir, and the image archive into its images dir, imported with ctr at install.
   */
  private FakeRelease addKubeadm(String version) {
    Path dir = artifactsDir.resolve(version);
    HostProfile layout = HostProfile.kubeadmDefaults();
    try {
      List<Artifact> binaries = new ArrayList<>();
      for (String name : KUBEADM_BINARIES) {
        Path file = dir.resolve(name);
        long size = "kubelet".equals(name) ? sizes.binaryBytes() : sizes.binaryBytes() / 2;
        FakeArtifactWriter.Written written = FakeArtifactWriter.writeKubernetesBinary(file, name, version, size);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        binaries.add(new Artifact(name, ArtifactKind.BINARY, file.toString(), written.sha256(), written.sizeBytes(),
            layout.binDir() + "/" + name, "0755"));
      }
      Path imagesFile = dir.resolve(KUBERNETES_IMAGES_FILE);
      FakeArtifactWriter.Written images =
          FakeArtifactWriter.writeKubernetesImageArchive(imagesFile, version, sizes.imagePaddingBytes());
      Files.setPosixFilePermissions(imagesFile, PosixFilePermissions.fromString("rw-r--r--"));
      FakeRelease release = new FakeRelease(version, Distribution.KUBEADM, binaries,
          new Artifact(KUBERNETES_IMAGES_NAME, ArtifactKind.IMAGE_ARCHIVE, imagesFile.toString(), images.sha256(),
              images.sizeBytes(), layout.imagesDir() + "/kubernetes-images-amd64-" + version + ".tar", "0644"));
      releases.put(version, release);
      LOG.info("fake kubeadm release {}: kubelet {} bytes sha256 {}", version, binaries.get(0).sizeBytes(),
          binaries.get(0).sha256());
      return release;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write fake release " + version, e);
    }
  }

  /**
   * The k0s binary into {@code /usr/local/bin} and its airgap image bundle into {@code
   * /var/lib/k0s/images/}, which k0s imports when it starts.
   */
  private FakeRelease addK0s(String version) {
    Path dir = artifactsDir.resolve(version);
    HostProfile layout = HostProfile.k0sDefaults();
    try {
      Path binaryFile = dir.resolve(K0S_BINARY_NAME);
      FakeArtifactWriter.Written binary = FakeArtifactWriter.writeK0sBinary(binaryFile, version, sizes.binaryBytes());
      Files.setPosixFilePermissions(binaryFile, PosixFilePermissions.fromString("rwxr-xr-x"));
      String bundleName = "k0s-airgap-bundle-" + version.replace('+', '-') + "-" + ARCH;
      Path bundleFile = dir.resolve(bundleName);
      FakeArtifactWriter.Written bundle =
          FakeArtifactWriter.writeK0sImageBundle(bundleFile, version, sizes.imagePaddingBytes());
      Files.setPosixFilePermissions(bundleFile, PosixFilePermissions.fromString("rw-r--r--"));
      FakeRelease release = new FakeRelease(version, Distribution.K0S,
          List.of(new Artifact(K0S_BINARY_NAME, ArtifactKind.BINARY, binaryFile.toString(), binary.sha256(),
              binary.sizeBytes(), layout.binDir() + "/k0s", "0755")),
          new Artifact(K0S_BUNDLE_NAME, ArtifactKind.IMAGE_ARCHIVE, bundleFile.toString(), bundle.sha256(),
              bundle.sizeBytes(), layout.imagesDir() + "/" + bundleName, "0644"));
      releases.put(version, release);
      LOG.info("fake k0s release {}: binary {} bytes sha256 {}", version, binary.sizeBytes(), binary.sha256());
      return release;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write fake release " + version, e);
    }
  }

  /** The static-pod manifests of a kubeadm control plane at {@code version}, by file name. */
  public static Map<String, String> staticPodManifests(String version) {
    return FakeArtifactWriter.staticPodManifests(version);
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
      entry.put("distribution", release.distribution().name());
      entry.put("arch", ARCH);
      if (os == HostOs.KAIROS) {
        entry.put("os", os.name());
        entry.put("artifacts", List.of(toJson(osImage(release.version()))));
      } else {
        entry.put("artifacts", release.artifacts().stream().map(FakeReleases::toJson).toList());
      }
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
          "'" + version + "' is not a version like v1.30.4+k3s1, v1.30.6 or v1.30.6+k0s.0");
    }
    return KubeVersion.parse(version);
  }
}
