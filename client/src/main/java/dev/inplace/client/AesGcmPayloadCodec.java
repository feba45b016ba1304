package dev.inplace.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.temporal.api.common.v1.Payload;
import io.temporal.payload.codec.PayloadCodec;
import io.temporal.payload.codec.PayloadCodecException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.List;
import java.util.stream.Collectors;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Encrypts every Temporal payload with AES-256-GCM: the whole serialized payload (its metadata and
 * data) becomes the ciphertext of a new payload whose metadata says {@code encoding:
 * binary/encrypted} and names the key ({@code encryption-key-id}). A fresh 12-byte nonce per payload
 * is stored before the ciphertext; the key ID is authenticated as associated data. A payload that is
 * not encrypted is refused on decode: it came from a client without the key (a run started by hand
 * with made-up input), and is no more trusted than that client. While runs started before encryption
 * was turned on drain, {@code acceptPlaintext} lets their payloads through.
 */
public final class AesGcmPayloadCodec implements PayloadCodec {
  public static final String ENCODING = "binary/encrypted";
  public static final String KEY_ID = "encryption-key-id";
  static final String ENCODING_KEY = "encoding";
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;

  private final PayloadKeys keys;
  private final boolean acceptPlaintext;
  private final SecureRandom random = new SecureRandom();

  /** Refuses payloads that are not encrypted. */
  public AesGcmPayloadCodec(PayloadKeys keys) {
    this(keys, false);
  }

  /** With {@code acceptPlaintext}, payloads that are not encrypted pass through on decode. */
  public AesGcmPayloadCodec(PayloadKeys keys, boolean acceptPlaintext) {
    this.keys = keys;
    this.acceptPlaintext = acceptPlaintext;
  }

  @Override
  public List<Payload> encode(List<Payload> payloads) {
    return payloads.stream().map(this::encrypt).collect(Collectors.toList());
  }

  @Override
  public List<Payload> decode(List<Payload> payloads) {
    return payloads.stream().map(this::decrypt).collect(Collectors.toList());
  }

  private Payload encrypt(Payload payload) {
    String id = keys.currentId();
    byte[] nonce = new byte[NONCE_BYTES];
    random.nextBytes(nonce);
    byte[] sealed = cipher(Cipher.ENCRYPT_MODE, keys.current(), nonce, id, payload.toByteArray());
    return Payload.newBuilder()
        .putMetadata(ENCODING_KEY, ByteString.copyFromUtf8(ENCODING))
        .putMetadata(KEY_ID, ByteString.copyFromUtf8(id))
        .setData(ByteString.copyFrom(ByteBuffer.allocate(nonce.length + sealed.length).put(nonce).put(sealed).array()))
        .build();
  }

  private Payload decrypt(Payload payload) {
    ByteString encoding = payload.getMetadataMap().get(ENCODING_KEY);
    if (encoding == null || !ENCODING.equals(encoding.toStringUtf8())) {
      if (acceptPlaintext) {
        return payload;
      }
      throw new PayloadCodecException("a payload that is not encrypted was refused: with payload encryption on, every"
          + " input must come from a client that holds the key (" + PayloadEncryption.ACCEPT_PLAINTEXT
          + "=true lets older, unencrypted payloads through while runs started before encryption drain)");
    }
    ByteString idBytes = payload.getMetadataMap().get(KEY_ID);
    String id = idBytes == null ? "" : idBytes.toStringUtf8();
    SecretKey key = keys.key(id);
    if (key == null) {
      throw new PayloadCodecException("payload encrypted with key " + id
          + ", which is not in the payload key file (keep old keys after a rotation)");
    }
    byte[] data = payload.getData().toByteArray();
    if (data.length < NONCE_BYTES + TAG_BITS / 8) {
      throw new PayloadCodecException("encrypted payload is truncated");
    }
    byte[] nonce = java.util.Arrays.copyOfRange(data, 0, NONCE_BYTES);
    byte[] sealed = java.util.Arrays.copyOfRange(data, NONCE_BYTES, data.length);
    try {
      return Payload.parseFrom(cipher(Cipher.DECRYPT_MODE, key, nonce, id, sealed));
    } catch (InvalidProtocolBufferException e) {
      throw new PayloadCodecException("decrypted payload is not a payload", e);
    }
  }

  private static byte[] cipher(int mode, SecretKey key, byte[] nonce, String keyId, byte[] input) {
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(mode, key, new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(keyId.getBytes(StandardCharsets.UTF_8));
      return cipher.doFinal(input);
    } catch (GeneralSecurityException e) {
      // A wrong key or tampered bytes: the tag does not verify. Never echo the bytes.
      throw new PayloadCodecException("cannot " + (mode == Cipher.ENCRYPT_MODE ? "encrypt" : "decrypt")
          + " a payload with key " + keyId + ": " + e.getClass().getSimpleName());
    }
  }
}
