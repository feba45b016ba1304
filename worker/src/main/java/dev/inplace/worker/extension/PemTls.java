package dev.inplace.worker.extension;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * An {@link SSLContext} from PEM files as cert-manager writes them ({@code tls.crt}, {@code tls.key},
 * {@code ca.crt}), with the JDK only. Keys may be PKCS#8 ({@code PRIVATE KEY}), PKCS#1 RSA ({@code RSA
 * PRIVATE KEY}, cert-manager's default for RSA) or SEC1 EC ({@code EC PRIVATE KEY}, its default for
 * ECDSA); encrypted keys are not supported. The server re-reads them when they change
 * ({@link ReloadingTls}).
 */
final class PemTls {
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");
  private static final char[] NO_PASSWORD = new char[0];

  private PemTls() {}

  /** A server context presenting {@code cert}/{@code key}, trusting {@code clientCa} for client certificates. */
  static SSLContext serverContext(Path cert, Path key, Optional<Path> clientCa) {
    try {
      List<X509Certificate> chain = certificates(cert);
      if (chain.isEmpty()) {
        throw new IllegalArgumentException("no CERTIFICATE block in " + cert);
      }
      PrivateKey privateKey = privateKey(key);
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("server", privateKey, NO_PASSWORD, chain.toArray(new Certificate[0]));
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, NO_PASSWORD);
      TrustManagerFactory tmf = null;
      if (clientCa.isPresent()) {
        tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trustStore(certificates(clientCa.get()), clientCa.get()));
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build a key store", e);
    } catch (GeneralSecurityException e) {
      // Messages name the file and the problem, never key material.
      throw new IllegalArgumentException("cannot build TLS from " + cert + " and " + key + ": " + e.getMessage(), e);
    }
  }

  /** A key store holding {@code certificates} as trusted entries. */
  static KeyStore trustStore(List<X509Certificate> certificates, Path source) throws GeneralSecurityException {
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException("no CERTIFICATE block in " + source);
    }
    try {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      for (int i = 0; i < certificates.size(); i++) {
        trust.setCertificateEntry("ca-" + i, certificates.get(i));
      }
      return trust;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<X509Certificate> certificates(Path file) throws GeneralSecurityException {
    return certificates(file, bytes(file));
  }

  /** The certificates of {@code pem}, the contents of {@code file} (named in errors). */
  static List<X509Certificate> certificates(Path file, byte[] pem) throws GeneralSecurityException {
    CertificateFactory factory = CertificateFactory.getInstance("X.509");
    List<X509Certificate> result = new ArrayList<>();
    for (Block block : blocks(pem)) {
      if (block.type().equals("CERTIFICATE")) {
        Collection<? extends Certificate> parsed = factory.generateCertificates(new ByteArrayInputStream(block.der()));
        parsed.forEach(c -> result.add((X509Certificate) c));
      }
    }
    return result;
  }

  static PrivateKey privateKey(Path file) throws GeneralSecurityException {
    return privateKey(file, bytes(file));
  }

  /** The private key of {@code pem}, the contents of {@code file} (named in errors). */
  static PrivateKey privateKey(Path file, byte[] pem) throws GeneralSecurityException {
    for (Block block : blocks(pem)) {
      switch (block.type()) {
        case "PRIVATE KEY":
          return pkcs8(block.der(), file);
        case "RSA PRIVATE KEY":
          return KeyFactory.getInstance("RSA")
              .generatePrivate(new PKCS8EncodedKeySpec(Der.pkcs8(Der.RSA_ENCRYPTION, null, block.der())));
        case "EC PRIVATE KEY":
          byte[] curve = Der.sec1Curve(block.der());
          if (curve == null) {
            throw new IllegalArgumentException("EC key in " + file + " does not name its curve; use PKCS#8");
          }
          return KeyFactory.getInstance("EC")
              .generatePrivate(new PKCS8EncodedKeySpec(Der.pkcs8(Der.EC_PUBLIC_KEY, curve, block.der())));
        case "ENCRYPTED PRIVATE KEY":
          throw new IllegalArgumentException("the key in " + file + " is encrypted; give an unencrypted PKCS#8 key");
        default:
          // other blocks (certificates bundled with the key) are skipped
      }
    }
    throw new IllegalArgumentException("no private key block in " + file);
  }

  private static PrivateKey pkcs8(byte[] der, Path file) throws GeneralSecurityException {
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "EdDSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new IllegalArgumentException("the PKCS#8 key in " + file + " is not RSA, EC or Ed25519");
  }

  private record Block(String type, byte[] der) {}

  private static byte[] bytes(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  private static List<Block> blocks(byte[] pem) {
    String text = new String(pem, StandardCharsets.US_ASCII);
    List<Block> blocks = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      blocks.add(new Block(m.group(1), Base64.getMimeDecoder().decode(m.group(2))));
    }
    return blocks;
  }

  /** Just enough DER to wrap PKCS#1 and SEC1 keys into PKCS#8. */
  static final class Der {
    // OID 1.2.840.113549.1.1.1 and 1.2.840.10045.2.1, encoded with tag and length.
    static final byte[] RSA_ENCRYPTION = {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01};
    static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    private Der() {}

    /** PrivateKeyInfo { version 0, AlgorithmIdentifier { oid, params or NULL }, OCTET STRING key }. */
    static byte[] pkcs8(byte[] algorithmOid, byte[] parameters, byte[] key) {
      byte[] params = parameters == null ? new byte[] {0x05, 0x00} : parameters;
      byte[] algorithm = tlv(0x30, concat(algorithmOid, params));
      return tlv(0x30, concat(new byte[] {0x02, 0x01, 0x00}, algorithm, tlv(0x04, key)));
    }

    /** The curve OID (tag included) in a SEC1 ECPrivateKey's {@code [0] parameters}, or null. */
    static byte[] sec1Curve(byte[] der) {
      int[] seq = header(der, 0);
      int pos = seq[0];
      int end = Math.min(der.length, seq[0] + seq[1]);
      while (pos < end) {
        int tag = der[pos] & 0xff;
        int[] h = header(der, pos);
        if (tag == 0xa0) {
          int[] inner = header(der, h[0]);
          return java.util.Arrays.copyOfRange(der, h[0], inner[0] + inner[1]);
        }
        pos = h[0] + h[1];
      }
      return null;
    }

    /** {start of content, content length} of the element at {@code pos}. */
    private static int[] header(byte[] der, int pos) {
      int length = der[pos + 1] & 0xff;
      int start = pos + 2;
      if (length > 0x80) {
        int bytes = length & 0x7f;
        length = 0;
        for (int i = 0; i < bytes; i++) {
          length = (length << 8) | (der[start + i] & 0xff);
        }
        start += bytes;
      }
      return new int[] {start, length};
    }

    private static byte[] tlv(int tag, byte[] content) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.write(tag);
      int n = content.length;
      if (n < 0x80) {
        out.write(n);
      } else if (n < 0x100) {
        out.write(0x81);
        out.write(n);
      } else if (n < 0x10000) {
        out.write(0x82);
        out.write(n >> 8);
        out.write(n);
      } else {
        out.write(0x83);
        out.write(n >> 16);
        out.write(n >> 8);
        out.write(n);
      }
      out.writeBytes(content);
      return out.toByteArray();
    }

    private static byte[] concat(byte[]... parts) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (byte[] p : parts) {
        out.writeBytes(p);
      }
      return out.toByteArray();
    }
  }
}
