package dev.inplace.client;

import io.temporal.common.converter.CodecDataConverter;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.DefaultDataConverter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The one data converter of every inplace process (worker, watcher, extension, CLI, sandbox): the
 * default JSON converter, whose failures go into history with credentials redacted
 * ({@link RedactingFailureConverter}), and with {@value #KEY_FILE} set, AES-256-GCM encryption of
 * every payload and of failure messages and stack traces ({@link AesGcmPayloadCodec}). Processes that
 * share a namespace must share the key file.
 */
public final class PayloadEncryption {
  /** The mounted key file ({@link PayloadKeys}); unset means payloads are stored in clear. */
  public static final String KEY_FILE = "INPLACE_PAYLOAD_KEY_FILE";
  /**
   * {@code true}: with encryption on, payloads that are not encrypted are still read (while runs
   * started before encryption was turned on drain); default {@code false}: they are refused.
   */
  public static final String ACCEPT_PLAINTEXT = "INPLACE_PAYLOAD_ACCEPT_PLAINTEXT";
  /** Every variable this class reads. */
  public static final List<String> KEYS = List.of(KEY_FILE, ACCEPT_PLAINTEXT);

  private PayloadEncryption() {}

  /** The converter {@code env} asks for. */
  public static DataConverter fromEnvironment(Map<String, String> env) {
    String file = env.getOrDefault(KEY_FILE, "").trim();
    String accept = env.getOrDefault(ACCEPT_PLAINTEXT, "false").trim();
    if (!accept.equals("true") && !accept.equals("false")) {
      throw new IllegalArgumentException(ACCEPT_PLAINTEXT + " must be true or false, got " + accept);
    }
    return file.isEmpty() ? plain()
        : encrypting(PayloadKeys.read(Path.of(file)), accept.equals("true"));
  }

  /** JSON payloads in clear; failure messages, stack traces and details redacted. */
  public static DataConverter plain() {
    return DefaultDataConverter.newDefaultInstance().withFailureConverter(new RedactingFailureConverter());
  }

  /** Encrypts payloads and failure attributes with {@code keys}; refuses payloads that are not encrypted. */
  public static DataConverter encrypting(PayloadKeys keys) {
    return encrypting(keys, false);
  }

  /** As {@link #encrypting(PayloadKeys)}; with {@code acceptPlaintext}, unencrypted payloads are read. */
  public static DataConverter encrypting(PayloadKeys keys, boolean acceptPlaintext) {
    return new CodecDataConverter(plain(),
        List.of(new AesGcmPayloadCodec(keys, acceptPlaintext)), true);
  }
}
