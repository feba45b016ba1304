package dev.inplace.worker.extension;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A CA, a server certificate for localhost/127.0.0.1 and a client certificate, as PEM files. */
final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(1);

  final Path caCert;
  final Path serverCert;
  final Path serverKey;
  final Path clientCert;
  final Path clientKey;
  final X509Certificate ca;
  private final KeyPair caKeys;
  private final KeyPair clientKeys;
  private final X509Certificate client;

  private TestCertificates(Path dir, String keyAlgorithm) throws Exception {
    caKeys = keys("EC");
    ca = certificate("CN=inplace test CA", caKeys, "CN=inplace test CA", caKeys.getPrivate(), true);
    KeyPair serverKeys = keys(keyAlgorithm);
    X509Certificate server = certificate("CN=inplace-extension", serverKeys, "CN=inplace test CA", caKeys.getPrivate(), false);
    clientKeys = keys("EC");
    client = certificate("CN=capi-controller-manager", clientKeys, "CN=inplace test CA", caKeys.getPrivate(), false);
    caCert = write(dir.resolve("ca.crt"), pem("CERTIFICATE", ca.getEncoded()));
    serverCert = write(dir.resolve("tls.crt"), pem("CERTIFICATE", server.getEncoded()) + pem("CERTIFICATE", ca.getEncoded()));
    serverKey = write(dir.resolve("tls.key"), pem("PRIVATE KEY", serverKeys.getPrivate().getEncoded()));
    clientCert = write(dir.resolve("client.crt"), pem("CERTIFICATE", client.getEncoded()));
    clientKey = write(dir.resolve("client.key"), pem("PRIVATE KEY", clientKeys.getPrivate().getEncoded()));
  }

  static TestCertificates create(Path dir) throws Exception {
    return new TestCertificates(dir, "EC");
  }

  static TestCertificates create(Path dir, String serverKeyAlgorithm) throws Exception {
    return new TestCertificates(dir, serverKeyAlgorithm);
  }

  /** The server key in its traditional form: PKCS#1 for RSA, SEC1 for EC (cert-manager's defaults). */
  String traditionalServerKey() throws Exception {
    PrivateKey key = PemTls.privateKey(serverKey);
    PrivateKeyInfo info = PrivateKeyInfo.getInstance(key.getEncoded());
    byte[] inner = key instanceof java.security.interfaces.ECPrivateKey ec
        // As OpenSSL and cert-manager write SEC1: with the curve in [0] parameters.
        ? new org.bouncycastle.asn1.sec.ECPrivateKey(256, ec.getS(), info.getPrivateKeyAlgorithm().getParameters()).getEncoded()
        : info.parsePrivateKey().toASN1Primitive().getEncoded();
    return pem(key.getAlgorithm().equals("RSA") ? "RSA PRIVATE KEY" : "EC PRIVATE KEY", inner);
  }

  /** A client context trusting the test CA, presenting the client certificate when asked to. */
  SSLContext clientContext(boolean presentCertificate) throws Exception {
    return clientContext(presentCertificate ? client : null, clientKeys);
  }

  /** A client context presenting a certificate the same CA signed for another subject. */
  SSLContext clientContextAs(String subject) throws Exception {
    KeyPair keys = keys("EC");
    return clientContext(certificate(subject, keys, "CN=inplace test CA", caKeys.getPrivate(), false), keys);
  }

  /** Another CA, as each CAPI manager's namespace has one in deploy/extension (issue 34, H5). */
  record Ca(X509Certificate certificate, KeyPair keys) {
    static Ca create(String subject) throws Exception {
      KeyPair keys = TestCertificates.keys("EC");
      return new Ca(TestCertificates.certificate(subject, keys, subject, keys.getPrivate(), true), keys);
    }

    String pem() {
      try {
        return TestCertificates.pem("CERTIFICATE", certificate.getEncoded());
      } catch (java.security.cert.CertificateEncodingException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** A client context trusting the test CA (the server), presenting a certificate {@code issuer} signed for {@code subject}. */
  SSLContext clientContextSignedBy(Ca issuer, String subject) throws Exception {
    KeyPair keys = keys("EC");
    X509Certificate presented = certificate(subject, keys,
        issuer.certificate().getSubjectX500Principal().getName(), issuer.keys().getPrivate(), false);
    return clientContext(presented, keys, issuer.certificate());
  }

  private SSLContext clientContext(X509Certificate presented, KeyPair presentedKeys) throws Exception {
    return clientContext(presented, presentedKeys, ca);
  }

  private SSLContext clientContext(X509Certificate presented, KeyPair presentedKeys, X509Certificate presentedIssuer)
      throws Exception {
    boolean presentCertificate = presented != null;
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (presentCertificate) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("client", presentedKeys.getPrivate(), new char[0], new java.security.cert.Certificate[] {presented, presentedIssuer});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return context;
  }

  private static KeyPair keys(String algorithm) throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance(algorithm);
    generator.initialize(algorithm.equals("RSA") ? 2048 : 256);
    return generator.generateKeyPair();
  }

  private static X509Certificate certificate(
      String subject, KeyPair keys, String issuer, PrivateKey issuerKey, boolean ca) throws Exception {
    Instant now = Instant.now();
    JcaX509v3CertificateBuilder builder =
        new JcaX509v3CertificateBuilder(
            new X500Name(issuer),
            BigInteger.valueOf(SERIAL.getAndIncrement()),
            Date.from(now.minus(Duration.ofMinutes(5))),
            Date.from(now.plus(Duration.ofDays(1))),
            new X500Name(subject),
            keys.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
    if (!ca) {
      builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
          new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
    }
    String signature = issuerKey.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
    return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder(signature).build(issuerKey)));
  }

  static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }

  private static Path write(Path file, String text) throws Exception {
    return Files.writeString(file, text);
  }
}
