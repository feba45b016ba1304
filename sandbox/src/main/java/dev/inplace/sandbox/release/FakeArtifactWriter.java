package dev.inplace.sandbox.release;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * Writes the bytes of fake artifacts. Everything is derived from the version (and sizes), so the
 * same version always yields byte-identical files and digests: benchmarks and tests can pin them.
 */
final class FakeArtifactWriter {
  private static final byte[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
          .getBytes(StandardCharsets.US_ASCII);
  private static final int PADDING_LINE = 80;
  private static final int BLOCK = 512;

  /** Where k3s saves etcd snapshots by default (and the fake k3s too, under the node root). */
  static final String SNAPSHOT_DIR = "/var/lib/rancher/k3s/server/db/snapshots";

  private FakeArtifactWriter() {}

  /** Digest and size of a written file. */
  record Written(String sha256, long sizeBytes) {}

  /** The short commit k3s prints after its version, derived from the version. */
  static String commitOf(String version) {
    return sha256Hex(("k3s " + version).getBytes(StandardCharsets.UTF_8)).substring(0, 8);
  }

  /**
   * A POSIX shell script printing {@code k3s version V (commit)} and the Go version for {@code
   * --version}, saving a fake etcd snapshot for {@code etcd-snapshot save --name NAME} (see {@link
   * #SNAPSHOT_DIR}), exiting 0 for anything else, padded after its {@code exit 0} line (never
   * parsed) with printable pseudo-random comment lines up to {@code totalBytes}.
   */
  static Written writeBinary(Path target, String version, long totalBytes) throws IOException {
    String script =
        """
        #!/bin/sh
        # Fake k3s @VERSION@ made by the inplace sandbox: it reports its version and saves fake etcd snapshots.
        case "${1:-}" in
          --version|-v|version)
            echo 'k3s version @VERSION@ (@COMMIT@)'
            echo 'go version go1.22.5'
            ;;
          etcd-snapshot)
            # k3s names a snapshot <name>-<node>-<unix time>; the node is the host root's name.
            shift
            if [ "${1:-}" = save ]; then shift; fi
            name=on-demand
            while [ $# -gt 0 ]; do
              case "$1" in
                --name) name="${2:-}"; if [ $# -ge 2 ]; then shift 2; else shift; fi ;;
                --name=*) name="${1#--name=}"; shift ;;
                *) shift ;;
              esac
            done
            case "$name" in
              ''|*/*|.*) echo "fake k3s: invalid snapshot name '$name'" >&2; exit 1 ;;
            esac
            root="${INPLACE_HOST_ROOT:-}"
            db="$root$(dirname @SNAPSHOT_DIR@)"
            if [ ! -d "$db/etcd" ] && [ -f "$db/state.db" ]; then
              echo 'level=fatal msg="etcd datastore disabled"' >&2
              exit 1
            fi
            node="$(basename "${root:-/$(hostname)}")"
            dir="$root@SNAPSHOT_DIR@"
            file="$name-$node-$(date +%s)"
            mkdir -p "$dir"
            echo "fake etcd snapshot $file of k3s @VERSION@" > "$dir/$file"
            echo "INFO[0000] Snapshot $file saved."
            ;;
        esac
        exit 0
        """
            .replace("@VERSION@", version)
            .replace("@COMMIT@", commitOf(version))
            .replace("@SNAPSHOT_DIR@", SNAPSHOT_DIR);
    byte[] header = script.getBytes(StandardCharsets.US_ASCII);
    return writeAtomically(
        target,
        out -> {
          out.write(header);
          writePaddingLines(out, seed("binary", version), totalBytes - header.length);
        });
  }

  /**
   * A fake {@code k0s} of {@code version}, padded like {@link #writeBinary}: {@code version} prints
   * the release ({@code v1.31.2+k0s.0}); {@code status}, {@code stop} and {@code start} drive the
   * node's service (k0scontroller or k0sworker, whichever the sandbox's systemd knows) through the
   * fake systemctl, as k0s drives its init system; {@code backup --save-path DIR} writes {@code
   * DIR/k0s_backup_<time>.tar.gz} on a running controller.
   */
  static Written writeK0sBinary(Path target, String version, long totalBytes) throws IOException {
    String script =
        """
        #!/bin/sh
        # Fake k0s @VERSION@ made by the inplace sandbox.
        root="${INPLACE_HOST_ROOT:-}"
        services="$root/run/sandbox/services"
        unit=k0sworker
        if [ -f "$services/k0scontroller" ]; then unit=k0scontroller; fi
        running() { systemctl is-active --quiet "$unit"; }
        case "${1:-}" in
          version) echo '@VERSION@' ;;
          --version) echo 'k0s version @VERSION@' ;;
          status)
            if ! running; then echo 'Error: k0s is not running' >&2; exit 1; fi
            echo 'Version: @VERSION@'
            echo "Role: ${unit#k0s}"
            echo 'Init System: linux-systemd'
            ;;
          stop)
            if ! running; then echo 'Error: k0s is not running' >&2; exit 1; fi
            systemctl stop "$unit" || exit 1
            ;;
          start)
            if running; then echo 'Error: k0s is already running' >&2; exit 1; fi
            # A unit that fails to start fails k0s start, as the init system reports it.
            systemctl start "$unit" || exit 1
            ;;
          backup)
            shift
            dir=""
            while [ $# -gt 0 ]; do
              case "$1" in
                --save-path) dir="${2:-}"; if [ $# -ge 2 ]; then shift 2; else shift; fi ;;
                --save-path=*) dir="${1#--save-path=}"; shift ;;
                *) shift ;;
              esac
            done
            if [ "$unit" != k0scontroller ]; then echo 'Error: backup runs on controllers only' >&2; exit 1; fi
            if ! running; then echo 'Error: k0s is not running' >&2; exit 1; fi
            if [ -z "$dir" ] || [ ! -d "$dir" ]; then echo "Error: save path '$dir' is not a directory" >&2; exit 1; fi
            file="$dir/k0s_backup_$(date -u +%Y-%m-%dT%H_%M_%SZ).tar.gz"
            echo "fake k0s backup of k0s @VERSION@ (etcd, certificates, manifests)" > "$file"
            echo "level=info msg=\"backup saved to $file\""
            ;;
        esac
        exit 0
        """
            .replace("@VERSION@", version);
    byte[] header = script.getBytes(StandardCharsets.US_ASCII);
    return writeAtomically(
        target,
        out -> {
          out.write(header);
          writePaddingLines(out, seed("k0s", version), totalBytes - header.length);
        });
  }

  /** The airgap image bundle of a k0s release: the images k0s {@code version} runs. */
  static Written writeK0sImageBundle(Path target, String version, long paddingBytes) throws IOException {
    String upstream = version.replaceFirst("\\+.*$", "");
    return writeImageArchive(
        target,
        version,
        paddingBytes,
        "{\"k0sVersion\":\"" + version + "\",\"images\":[\"quay.io/k0sproject/kube-proxy:" + upstream
            + "\",\"quay.io/k0sproject/coredns:1.11.3\",\"quay.io/k0sproject/pause:3.9\"]}\n");
  }

  /** The etcd image tag kubeadm deploys with a Kubernetes version (as upstream pins them). */
  static String etcdTagOf(String version) {
    String minor = version.replaceFirst("^v1\\.(\\d+)\\..*$", "$1");
    return switch (minor) {
      case "29", "30" -> "3.5.12-0";
      case "31" -> "3.5.15-0";
      default -> "3.5.16-0";
    };
  }

  /**
   * A fake kubeadm, kubelet or kubectl of {@code version}: a shell script padded like {@link
   * #writeBinary}. kubelet prints {@code Kubernetes V} for {@code --version}; kubectl prints its
   * client version; kubeadm prints {@code V} for {@code version -o short} and simulates {@code
   * upgrade plan|apply|node}: it records each run and its phases in {@code
   * $INPLACE_HOST_ROOT/var/log/kubeadm-phases.log}, keeps the previous static-pod manifests in
   * {@code etc/kubernetes/tmp/kubeadm-backup-manifests-*} and writes {@code
   * etc/kubernetes/manifests/} with the new image tags on a control plane, and the kubelet
   * configuration everywhere. {@code apply} refuses a version other than its own, as kubeadm does.
   */
  static Written writeKubernetesBinary(Path target, String name, String version, long totalBytes)
      throws IOException {
    String script =
        switch (name) {
          case "kubelet" -> """
              #!/bin/sh
              # Fake kubelet @VERSION@ made by the inplace sandbox.
              case "${1:-}" in
                --version|version) echo 'Kubernetes @VERSION@' ;;
              esac
              exit 0
              """;
          case "kubectl" -> """
              #!/bin/sh
              # Fake kubectl @VERSION@ made by the inplace sandbox.
              case "${1:-}" in
                version) echo 'Client Version: @VERSION@'; echo 'Kustomize Version: v5.4.2' ;;
              esac
              exit 0
              """;
          case "kubeadm" -> KUBEADM;
          default -> throw new IllegalArgumentException("no fake Kubernetes binary " + name);
        };
    byte[] header =
        script.replace("@VERSION@", version).replace("@ETCD@", etcdTagOf(version))
            .getBytes(StandardCharsets.US_ASCII);
    return writeAtomically(
        target,
        out -> {
          out.write(header);
          writePaddingLines(out, seed(name, version), totalBytes - header.length);
        });
  }

  private static final String KUBEADM =
      """
      #!/bin/bash
      # Fake kubeadm @VERSION@ made by the inplace sandbox: it reports its version and simulates upgrades.
      set -eu
      root="${INPLACE_HOST_ROOT:-}"
      log="$root/var/log/kubeadm-phases.log"
      manifests="$root/etc/kubernetes/manifests"
      mkdir -p "$root/var/log"
      if [ "${1:-}" = version ]; then
        if [ "${2:-}" = -o ] && [ "${3:-}" = short ]; then echo '@VERSION@'; else
          echo 'kubeadm version: &version.Info{Major:"1", GitVersion:"@VERSION@"}'; fi
        exit 0
      fi
      [ "${1:-}" = upgrade ] || exit 0
      action="${2:-}"; shift 2 || true
      wanted=""; config=""; yes=0; ignored=""
      while [ $# -gt 0 ]; do
        case "$1" in
          --config) config="${2:-}"; shift 2 ;;
          --config=*) config="${1#--config=}"; shift ;;
          --yes|-y) yes=1; shift ;;
          --ignore-preflight-errors=*) ignored="${1#--ignore-preflight-errors=}"; shift ;;
          -*) shift ;;
          *) wanted="$1"; shift ;;
        esac
      done
      if [ -n "$config" ]; then
        [ -f "$config" ] || { echo "fake kubeadm: config $config not found" >&2; exit 1; }
        grep -q '^kind: UpgradeConfiguration$' "$config" || { echo "fake kubeadm: $config is no UpgradeConfiguration" >&2; exit 1; }
        ignored="$(sed -n 's/^  ignorePreflightErrors: \\[\\(.*\\)\\]$/\\1/p' "$config" | head -n 1 | tr -d '" ')"
        [ -n "$wanted" ] || wanted="$(sed -n 's/^  kubernetesVersion: //p' "$config" | head -n 1)"
      fi
      control_plane=0
      [ -f "$manifests/kube-apiserver.yaml" ] && control_plane=1
      write_manifests() {
        local backup="$root/etc/kubernetes/tmp/kubeadm-backup-manifests-$(date +%Y-%m-%d-%H-%M-%S)-$$"
        mkdir -p "$backup"
        cp -p "$manifests"/*.yaml "$backup/"
        for c in kube-apiserver kube-controller-manager kube-scheduler; do
          printf 'apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: %s\\n  namespace: kube-system\\nspec:\\n  containers:\\n  - name: %s\\n    image: registry.k8s.io/%s:@VERSION@\\n' \\
            "$c" "$c" "$c" > "$manifests/$c.yaml.tmp"
          mv -f "$manifests/$c.yaml.tmp" "$manifests/$c.yaml"
        done
        printf 'apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: etcd\\n  namespace: kube-system\\nspec:\\n  containers:\\n  - name: etcd\\n    image: registry.k8s.io/etcd:@ETCD@\\n' \\
          > "$manifests/etcd.yaml.tmp"
        mv -f "$manifests/etcd.yaml.tmp" "$manifests/etcd.yaml"
      }
      kubelet_config() {
        mkdir -p "$root/var/lib/kubelet"
        printf 'apiVersion: kubelet.config.k8s.io/v1beta1\\nkind: KubeletConfiguration\\n# written by kubeadm @VERSION@\\n' > "$root/var/lib/kubelet/config.yaml"
      }
      record() { echo "$(date +%s) $*" >> "$log"; }
      case "$action" in
        plan)
          record "upgrade plan ${wanted:-@VERSION@} config=${config:+yes} ignore=$ignored phases=preflight,plan"
          echo "Upgrade to the latest version in the v1.x series: @VERSION@" ;;
        apply)
          if [ "$wanted" != '@VERSION@' ]; then
            echo "fake kubeadm @VERSION@: cannot upgrade to $wanted, only to @VERSION@" >&2; exit 1
          fi
          [ "$yes" = 1 ] || [ -n "$config" ] || { echo "fake kubeadm: apply needs --yes" >&2; exit 1; }
          [ "$control_plane" = 1 ] || { echo "fake kubeadm: apply needs a control plane (no $manifests/kube-apiserver.yaml)" >&2; exit 1; }
          write_manifests; kubelet_config
          record "upgrade apply @VERSION@ config=${config:+yes} ignore=$ignored phases=preflight,control-plane,upload-config,kubelet-config,bootstrap-token,addon/coredns,addon/kube-proxy,post-upgrade"
          echo "[upgrade/successful] SUCCESS! Your cluster was upgraded to \\"@VERSION@\\"." ;;
        node)
          if [ "$control_plane" = 1 ]; then
            write_manifests; kubelet_config
            record "upgrade node @VERSION@ config=${config:+yes} ignore=$ignored phases=preflight,control-plane,etcd,kubelet-config,addon/coredns,addon/kube-proxy"
          else
            kubelet_config
            record "upgrade node @VERSION@ config=${config:+yes} ignore=$ignored phases=preflight,kubelet-config"
          fi
          echo "[upgrade] The configuration for this node was successfully upgraded!" ;;
        *) echo "fake kubeadm: unknown upgrade action $action" >&2; exit 1 ;;
      esac
      exit 0
      """;

  /**
   * The static-pod manifests a kubeadm control plane of {@code version} runs, by file name: what
   * the sandbox seeds a control-plane host with before any upgrade.
   */
  static java.util.Map<String, String> staticPodManifests(String version) {
    java.util.Map<String, String> manifests = new java.util.LinkedHashMap<>();
    for (String c : java.util.List.of("kube-apiserver", "kube-controller-manager", "kube-scheduler")) {
      manifests.put(c + ".yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + c
          + "\n  namespace: kube-system\nspec:\n  containers:\n  - name: " + c + "\n    image: registry.k8s.io/" + c + ":"
          + version + "\n");
    }
    manifests.put("etcd.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n"
        + "  containers:\n  - name: etcd\n    image: registry.k8s.io/etcd:" + etcdTagOf(version) + "\n");
    return manifests;
  }

  /**
   * A ustar archive holding {@code manifest.json} (naming the version) and {@code padding.bin}
   * ({@code paddingBytes} pseudo-random bytes). Entry times are zero so the archive is
   * reproducible.
   */
  static Written writeImageArchive(Path target, String version, long paddingBytes)
      throws IOException {
    return writeImageArchive(
        target,
        version,
        paddingBytes,
        "{\"k3sVersion\":\""
            + version
            + "\",\"images\":[\"docker.io/rancher/k3s:"
            + version.replace('+', '-')
            + "\",\"docker.io/rancher/mirrored-pause:3.6\"]}\n");
  }

  /** The image archive of a kubeadm release: the control-plane images of {@code version}. */
  static Written writeKubernetesImageArchive(Path target, String version, long paddingBytes) throws IOException {
    return writeImageArchive(
        target,
        version,
        paddingBytes,
        "{\"kubernetesVersion\":\"" + version + "\",\"images\":[\"registry.k8s.io/kube-apiserver:" + version
            + "\",\"registry.k8s.io/kube-controller-manager:" + version + "\",\"registry.k8s.io/kube-scheduler:"
            + version + "\",\"registry.k8s.io/kube-proxy:" + version + "\",\"registry.k8s.io/etcd:"
            + etcdTagOf(version) + "\",\"registry.k8s.io/coredns/coredns:v1.11.3\",\"registry.k8s.io/pause:3.10\"]}\n");
  }

  private static Written writeImageArchive(Path target, String version, long paddingBytes, String manifestJson)
      throws IOException {
    byte[] manifest = manifestJson.getBytes(StandardCharsets.US_ASCII);
    return writeAtomically(
        target,
        out -> {
          writeTarEntry(out, "manifest.json", manifest.length);
          out.write(manifest);
          padToBlock(out, manifest.length);
          writeTarEntry(out, "padding.bin", paddingBytes);
          writeRandomBytes(out, seed("images", version), paddingBytes);
          padToBlock(out, paddingBytes);
          out.write(new byte[2 * BLOCK]);
        });
  }

  private interface Body {
    void writeTo(OutputStream out) throws IOException;
  }

  private static Written writeAtomically(Path target, Body body) throws IOException {
    Files.createDirectories(target.getParent());
    Path tmp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
    MessageDigest digest = sha256();
    try {
      try (OutputStream file = Files.newOutputStream(tmp);
          DigestOutputStream digesting = new DigestOutputStream(file, digest);
          BufferedOutputStream out = new BufferedOutputStream(digesting, 1 << 16)) {
        body.writeTo(out);
      }
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
    return new Written(HexFormat.of().formatHex(digest.digest()), Files.size(target));
  }

  private static void writePaddingLines(OutputStream out, long seed, long bytes)
      throws IOException {
    SplittableRandom random = new SplittableRandom(seed);
    byte[] line = new byte[PADDING_LINE];
    long remaining = bytes;
    while (remaining > 0) {
      int length = (int) Math.min(PADDING_LINE, remaining);
      if (length < 3) {
        Arrays.fill(line, 0, length, (byte) '\n');
      } else {
        line[0] = '#';
        line[1] = ' ';
        for (int i = 2; i < length - 1; i++) {
          line[i] = ALPHABET[random.nextInt(ALPHABET.length)];
        }
        line[length - 1] = '\n';
      }
      out.write(line, 0, length);
      remaining -= length;
    }
  }

  private static void writeRandomBytes(OutputStream out, long seed, long bytes) throws IOException {
    SplittableRandom random = new SplittableRandom(seed);
    ByteBuffer chunk = ByteBuffer.allocate(1 << 16);
    long remaining = bytes;
    while (remaining > 0) {
      chunk.clear();
      while (chunk.remaining() >= Long.BYTES) {
        chunk.putLong(random.nextLong());
      }
      int length = (int) Math.min(chunk.position(), remaining);
      out.write(chunk.array(), 0, length);
      remaining -= length;
    }
  }

  private static void writeTarEntry(OutputStream out, String name, long size) throws IOException {
    byte[] header = new byte[BLOCK];
    put(header, 0, 100, name);
    put(header, 100, 8, octal(0644, 7));
    put(header, 108, 8, octal(0, 7));
    put(header, 116, 8, octal(0, 7));
    put(header, 124, 12, octal(size, 11));
    put(header, 136, 12, octal(0, 11));
    Arrays.fill(header, 148, 156, (byte) ' ');
    header[156] = '0';
    put(header, 257, 6, "ustar");
    put(header, 263, 2, "00");
    put(header, 265, 32, "root");
    put(header, 297, 32, "root");
    long checksum = 0;
    for (byte b : header) {
      checksum += b & 0xff;
    }
    put(header, 148, 8, octal(checksum, 6));
    header[154] = 0;
    header[155] = ' ';
    out.write(header);
  }

  private static void padToBlock(OutputStream out, long written) throws IOException {
    int rest = (int) (written % BLOCK);
    if (rest != 0) {
      out.write(new byte[BLOCK - rest]);
    }
  }

  private static String octal(long value, int digits) {
    String text = Long.toOctalString(value);
    if (text.length() > digits) {
      throw new IllegalArgumentException("value " + value + " does not fit a tar header field");
    }
    return "0".repeat(digits - text.length()) + text;
  }

  private static void put(byte[] header, int offset, int length, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
    if (bytes.length > length) {
      throw new IllegalArgumentException("'" + text + "' does not fit a tar header field");
    }
    System.arraycopy(bytes, 0, header, offset, bytes.length);
  }

  private static long seed(String purpose, String version) {
    byte[] hash = sha256().digest((purpose + ":" + version).getBytes(StandardCharsets.UTF_8));
    return ByteBuffer.wrap(hash).getLong();
  }

  private static String sha256Hex(byte[] data) {
    return HexFormat.of().formatHex(sha256().digest(data));
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
