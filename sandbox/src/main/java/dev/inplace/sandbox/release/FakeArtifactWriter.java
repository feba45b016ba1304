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
   * A ustar archive holding {@code manifest.json} (naming the version) and {@code padding.bin}
   * ({@code paddingBytes} pseudo-random bytes). Entry times are zero so the archive is
   * reproducible.
   */
  static Written writeImageArchive(Path target, String version, long paddingBytes)
      throws IOException {
    byte[] manifest =
        ("{\"k3sVersion\":\""
                + version
                + "\",\"images\":[\"docker.io/rancher/k3s:"
                + version.replace('+', '-')
                + "\",\"docker.io/rancher/mirrored-pause:3.6\"]}\n")
            .getBytes(StandardCharsets.US_ASCII);
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
