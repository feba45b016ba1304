package dev.inplace.sandbox.extension;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * What cert-manager and the CAPI managers would hold in the demo: a CA ({@code ca.crt}, injected into
 * the ExtensionConfig's caBundle), the extension's serving certificate ({@code tls.crt}/{@code
 * tls.key}) and the managers' client certificate for mutual TLS.
 */
final class DemoTls {
  final Path caCert;
  final Path serverCert;
  final Path serverKey;
  private final X509Certificate ca;
  private final X509Certificate client;
  private final KeyPair clientKeys;

  private DemoTls(Path dir) throws Exception {
    Files.createDirectories(dir);
    KeyPair caKeys = keys();
    ca = certificate("CN=inplace-demo-ca", caKeys, caKeys.getPrivate(), true);
    KeyPair serverKeys = keys();
    X509Certificate server = certificate("CN=inplace-extension", serverKeys, caKeys.getPrivate(), false);
    clientKeys = keys();
    client = certificate("CN=capi-controller-manager", clientKeys, caKeys.getPrivate(), false);
    caCert = Files.writeString(dir.resolve("ca.crt"), pem("CERTIFICATE", ca.getEncoded()));
    serverCert = Files.writeString(dir.resolve("tls.crt"), pem("CERTIFICATE", server.getEncoded()));
    serverKey = Files.writeString(dir.resolve("tls.key"), pem("PRIVATE KEY", serverKeys.getPrivate().getEncoded()));
  }

  static DemoTls create(Path dir) {
    try {
      return new DemoTls(dir);
    } catch (Exception e) {
      throw new IllegalStateException("cannot issue the demo's certificates", e);
    }
  }

  /** The CAPI managers' side: trusts the CA (the caBundle), presents the client certificate. */
  SSLContext clientContext() {
    try {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", ca);
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("client", clientKeys.getPrivate(), new char[0], new Certificate[] {client, ca});
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return context;
    } catch (Exception e) {
      throw new IllegalStateException("cannot build the demo's client TLS context", e);
    }
  }

  private static KeyPair keys() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(256);
    return generator.generateKeyPair();
  }

  private static X509Certificate certificate(String subject, KeyPair keys, PrivateKey issuerKey, boolean isCa)
      throws Exception {
    Instant now = Instant.now();
    JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
        new X500Name("CN=inplace-demo-ca"), BigInteger.valueOf(now.toEpochMilli()).add(BigInteger.valueOf(subject.hashCode() & 0xffff)),
        Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(Duration.ofDays(1))),
        new X500Name(subject), keys.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(isCa));
    if (!isCa) {
      builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
          new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
    }
    return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
  }

  private static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }
}
