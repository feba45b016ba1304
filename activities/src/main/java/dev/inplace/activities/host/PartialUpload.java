package dev.inplace.activities.host;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Where an interrupted upload resumes: the host reports each partial file's size and sha256; an
 * upload resumes at that size only when the same prefix of the worker's copy has the same digest,
 * and starts over from byte 0 otherwise. The staged file is still checked whole before it is used.
 */
final class PartialUpload {
  private PartialUpload() {}

  /** A host's {@code partial=<name> <size> <sha256>} lines, by artifact name. */
  record Partial(long size, String sha256) {}

  static Map<String, Partial> parse(List<String> lines) {
    Map<String, Partial> partials = new HashMap<>();
    for (String line : lines) {
      String[] fields = line.trim().split(" ");
      if (fields.length == 3 && fields[1].matches("[0-9]{1,18}") && fields[2].matches("[0-9a-f]{64}")) {
        partials.put(fields[0], new Partial(Long.parseLong(fields[1]), fields[2]));
      }
    }
    return partials;
  }

  /** The offset to resume {@code local} at, given the host's partial copy (null: none). */
  static long resumeOffset(Path local, Partial partial) {
    if (partial == null || partial.size() <= 0) {
      return 0;
    }
    try {
      if (partial.size() > Files.size(local)) {
        return 0;
      }
      return prefixSha256(local, partial.size()).equals(partial.sha256()) ? partial.size() : 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String prefixSha256(Path file, long length) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    byte[] buffer = new byte[64 * 1024];
    long left = length;
    try (InputStream in = Files.newInputStream(file)) {
      while (left > 0) {
        int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
        if (n < 0) {
          throw new IOException(file + " is shorter than " + length + " bytes");
        }
        digest.update(buffer, 0, n);
        left -= n;
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }
}
