package dev.inplace.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * The AES-256 keys that encrypt Temporal payloads, read from a mounted file: one key per line,
 * {@code <key-id>:<base64 of 32 bytes>}. The first line is the key new payloads are encrypted with;
 * every line decrypts, so after a rotation (a new first line) histories written with an older key
 * stay readable for as long as that key stays in the file. Blank lines and {@code #} comments are
 * skipped. Key material never appears in a message.
 */
public final class PayloadKeys {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  private final String currentId;
  private final Map<String, SecretKey> keys;

  private PayloadKeys(String currentId, Map<String, SecretKey> keys) {
    this.currentId = currentId;
    this.keys = Map.copyOf(keys);
  }

  /** Reads and checks the key file; the message names the line, never its key. */
  public static PayloadKeys read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the payload key file " + file, e);
    }
    return parse(text, file.toString());
  }

  static PayloadKeys parse(String text, String source) {
    Map<String, SecretKey> keys = new LinkedHashMap<>();
    String first = null;
    String[] lines = text.split("\n");
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].trim();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int colon = line.indexOf(':');
      String id = colon < 0 ? "" : line.substring(0, colon).trim();
      if (!ID.matcher(id).matches()) {
        throw new IllegalArgumentException(source + " line " + (i + 1)
            + ": expected <key-id>:<base64 of 32 bytes>, with a key ID of [A-Za-z0-9._-]");
      }
      byte[] key;
      try {
        key = Base64.getDecoder().decode(line.substring(colon + 1).trim());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + " line " + (i + 1) + ": key " + id + " is not base64");
      }
      if (key.length != 32) {
        throw new IllegalArgumentException(source + " line " + (i + 1) + ": key " + id + " has " + key.length
            + " bytes; AES-256 needs 32");
      }
      if (keys.put(id, new SecretKeySpec(key, "AES")) != null) {
        throw new IllegalArgumentException(source + " line " + (i + 1) + ": key ID " + id + " appears twice");
      }
      first = first == null ? id : first;
    }
    if (first == null) {
      throw new IllegalArgumentException(source + " holds no key");
    }
    return new PayloadKeys(first, keys);
  }

  /** The ID of the key new payloads are encrypted with. */
  public String currentId() {
    return currentId;
  }

  SecretKey current() {
    return keys.get(currentId);
  }

  /** The key with this ID, or null when it is not (or no longer) in the file. */
  SecretKey key(String id) {
    return keys.get(id);
  }

  @Override
  public String toString() {
    return "PayloadKeys[current=" + currentId + ", ids=" + keys.keySet() + "]";
  }
}
