package dev.inplace.testbed;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The test bed's certificate authority, in place of cert-manager and kubeadm's PKI: it issues the
 * serving certificates of the API server and of webhooks on loopback, and client certificates whose
 * subject is the Kubernetes user (CN) and groups (O) the API server sees. Everything is written as
 * PEM files under one directory.
 */
public final class TestCa {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** A certificate and its key, as PEM files. */
  public record Issued(Path cert, Path key) {}

  private final Path dir;
  private final KeyPair keys;
  private final X509Certificate certificate;
  private final Path certPath;
  private final Path keyPath;

  private TestCa(Path dir, KeyPair keys, X509Certificate certificate, Path certPath, Path keyPath) {
    this.dir = dir;
    this.keys = keys;
    this.certificate = certificate;
    this.certPath = certPath;
    this.keyPath = keyPath;
  }

  /** A new CA named {@code name}, its certificate written to {@code dir/<name>.crt}. */
  public static TestCa create(Path dir, String name) {
    try {
      Files.createDirectories(dir);
      KeyPair keys = keyPair();
      X509Certificate cert = sign(new X500Name("CN=" + name), new X500Name("CN=" + name), keys, keys, true, List.of(), null);
      Path certPath = Files.writeString(dir.resolve(name + ".crt"), pem("CERTIFICATE", cert.getEncoded()));
      Path keyPath = Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
      return new TestCa(dir, keys, cert, certPath, keyPath);
    } catch (GeneralSecurityException | IOException | org.bouncycastle.operator.OperatorCreationException e) {
      throw new IllegalStateException("cannot create the test CA in " + dir, e);
    }
  }

  /** The CA's certificate (a caBundle, an API server's --client-ca-file). */
  public Path certificate() {
    return certPath;
  }

  /**
   * The CA's private key: Cluster API's {@code <cluster>-ca} Secret holds it, so that KCP signs the
   * workload cluster's admin kubeconfig with the CA the workload API server trusts.
   */
  public Path key() {
    return keyPath;
  }

  /** The CA's certificate as PEM text. */
  public String certificatePem() {
    try {
      return Files.readString(certPath);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A serving certificate for loopback: {@code localhost}, {@code 127.0.0.1} and {@code extraDnsNames}. */
  public Issued server(String name, String... extraDnsNames) {
    List<GeneralName> sans = new ArrayList<>(List.of(
        new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
    for (String dns : extraDnsNames) {
      sans.add(dns.matches("[0-9.]+") ? new GeneralName(GeneralName.iPAddress, dns) : new GeneralName(GeneralName.dNSName, dns));
    }
    return issue(name, new X500Name("CN=" + name), sans, KeyPurposeId.id_kp_serverAuth);
  }

  /** A client certificate for the Kubernetes user {@code user} in {@code groups}. */
  public Issued client(String fileName, String user, String... groups) {
    StringBuilder subject = new StringBuilder();
    for (String group : groups) {
      subject.append("O=").append(group).append(',');
    }
    subject.append("CN=").append(user);
    return issue(fileName, new X500Name(subject.toString()), List.of(), KeyPurposeId.id_kp_clientAuth);
  }

  /** An RSA key pair for signing service-account tokens, as {@code <name>.key} and {@code <name>.pub}. */
  public Issued serviceAccountKeys(String name) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048, RANDOM);
      KeyPair pair = generator.generateKeyPair();
      Path key = Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
      Path pub = Files.writeString(dir.resolve(name + ".pub"), pem("PUBLIC KEY", pair.getPublic().getEncoded()));
      return new Issued(pub, key);
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot create the service-account keys", e);
    }
  }

  private Issued issue(String name, X500Name subject, List<GeneralName> sans, KeyPurposeId purpose) {
    try {
      KeyPair leaf = keyPair();
      X509Certificate cert = sign(new X500Name(certificate.getSubjectX500Principal().getName()), subject, leaf, keys, false, sans, purpose);
      Path certFile = Files.writeString(dir.resolve(name + ".crt"), pem("CERTIFICATE", cert.getEncoded()));
      Path keyFile = Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", leaf.getPrivate().getEncoded()));
      return new Issued(certFile, keyFile);
    } catch (GeneralSecurityException | IOException | org.bouncycastle.operator.OperatorCreationException e) {
      throw new IllegalStateException("cannot issue " + name, e);
    }
  }

  private static X509Certificate sign(
      X500Name issuer, X500Name subject, KeyPair subjectKeys, KeyPair issuerKeys, boolean ca,
      List<GeneralName> sans, KeyPurposeId purpose)
      throws GeneralSecurityException, IOException, org.bouncycastle.operator.OperatorCreationException {
    Instant now = Instant.now();
    JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(
        issuer, new BigInteger(63, RANDOM), Date.from(now.minus(Duration.ofHours(1))),
        Date.from(now.plus(Duration.ofDays(30))), subject, subjectKeys.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
    if (ca) {
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
    } else {
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
    }
    if (!sans.isEmpty()) {
      builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
    }
    return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withRSA").build(issuerKeys.getPrivate())));
  }

  /**
   * RSA, written as PKCS#8: the one form that Go's crypto, the JDK and fabric8's kubeconfig reader
   * all take (fabric8 reads a PKCS#8 EC key as RSA and fails).
   */
  private static KeyPair keyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048, RANDOM);
    return generator.generateKeyPair();
  }

  static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }
}
