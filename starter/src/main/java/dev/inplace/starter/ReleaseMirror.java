package dev.inplace.starter;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Where {@code catalogue add} reads a release's files from: a mirror directory or an https
 * location. It measures a file (sha256 and size, by reading every byte) and says the source the
 * worker will fetch it from.
 */
sealed interface ReleaseMirror permits DirectoryMirror, HttpsMirror {
  /** A file measured: the catalogue's {@code source}, {@code sha256} and {@code sizeBytes}. */
  record Measured(String source, String sha256, long sizeBytes) {}

  /** The file {@code fileName} measured, or empty when the mirror does not have it. */
  Optional<Measured> measure(String fileName) throws IOException;

  /** The mirror as the operator named it, for messages. */
  String describe();

  /** Reads {@code in} to its end: the lower-case hex sha256 and the number of bytes. */
  static Measured digest(String source, InputStream in) throws IOException {
    MessageDigest sha256;
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
    long size;
    try (InputStream bytes = in; OutputStream sink = new DigestOutputStream(OutputStream.nullOutputStream(), sha256)) {
      size = bytes.transferTo(sink);
    }
    return new Measured(source, HexFormat.of().formatHex(sha256.digest()), size);
  }
}
