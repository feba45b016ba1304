package dev.inplace.client;

import io.temporal.common.converter.CodecDataConverter;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.DefaultDataConverter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The one data converter of every inplace process (worker, watcher, extension, CLI, sandbox): the
 * default JSON converter, and with {@value #KEY_FILE} set, AES-256-GCM encryption of every payload
 * and of failure messages and stack traces ({@link AesGcmPayloadCodec}). Processes that share a
 * namespace must share the key file.
 */
public final class PayloadEncryption {
  /** The mounted key file ({@link PayloadKeys}); unset means payloads are stored in clear. */
  public static final String KEY_FILE = "INPLACE_PAYLOAD_KEY_FILE";

  private PayloadEncryption() {}

  /** The converter {@code env} asks for. */
  public static DataConverter fromEnvironment(Map<String, String> env) {
    String file = env.getOrDefault(KEY_FILE, "").trim();
    return file.isEmpty() ? DefaultDataConverter.STANDARD_INSTANCE : encrypting(PayloadKeys.read(Path.of(file)));
  }

  /** Encrypts payloads and failure attributes with {@code keys}. */
  public static DataConverter encrypting(PayloadKeys keys) {
    return new CodecDataConverter(DefaultDataConverter.newDefaultInstance(),
        List.of(new AesGcmPayloadCodec(keys)), true);
  }
}
