package dev.inplace.testbed;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** TLS contexts from the test CA's PEM files, for the test bed's own readiness probes. */
final class PemTls {
  private PemTls() {}

  /** Trusts {@code ca}; presents {@code cert}/{@code key} when both are given. */
  static SSLContext context(Path ca, Path cert, Path key) {
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(ca)) {
        trust.setCertificateEntry("ca", factory.generateCertificate(in));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      KeyManagerFactory kmf = null;
      if (cert != null && key != null) {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        Certificate leaf;
        try (InputStream in = Files.newInputStream(cert)) {
          leaf = factory.generateCertificate(in);
        }
        keys.setKeyEntry("client", privateKey(key), new char[0], new Certificate[] {leaf});
        kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot build a TLS context from " + ca, e);
    }
  }

  private static PrivateKey privateKey(Path key) throws IOException, GeneralSecurityException {
    String pem = Files.readString(key, StandardCharsets.US_ASCII);
    String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body));
    try {
      return KeyFactory.getInstance("RSA").generatePrivate(spec);
    } catch (GeneralSecurityException notRsa) {
      return KeyFactory.getInstance("EC").generatePrivate(spec);
    }
  }
}
