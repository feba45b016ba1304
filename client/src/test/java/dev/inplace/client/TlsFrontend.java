package dev.inplace.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
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
 * A TLS endpoint in front of a plaintext gRPC server, as a TLS-terminating load balancer would be:
 * it listens on loopback with a certificate for {@link #SERVER_NAME} issued by its own CA, negotiates
 * ALPN h2, requires a client certificate from that CA, and pipes the bytes to the backend.
 */
final class TlsFrontend implements AutoCloseable {
  static final String SERVER_NAME = "temporal.inplace.test";

  final Path caCert;
  final Path clientCert;
  final Path clientKey;
  private final SSLServerSocket listener;
  private final int backendPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final List<String> handshakes = new CopyOnWriteArrayList<>();

  TlsFrontend(Path dir, int backendPort) throws Exception {
    this.backendPort = backendPort;
    KeyPair caKeys = keys();
    X509Certificate ca = certificate("CN=inplace test Temporal CA", caKeys, caKeys.getPrivate(), true);
    KeyPair serverKeys = keys();
    X509Certificate server = certificate("CN=" + SERVER_NAME, serverKeys, caKeys.getPrivate(), false);
    KeyPair clientKeys = keys();
    X509Certificate client = certificate("CN=inplace-worker", clientKeys, caKeys.getPrivate(), false);
    caCert = Files.writeString(dir.resolve("ca.pem"), pem("CERTIFICATE", ca.getEncoded()));
    clientCert = Files.writeString(dir.resolve("client.pem"), pem("CERTIFICATE", client.getEncoded()));
    clientKey = Files.writeString(dir.resolve("client.key"), pem("PRIVATE KEY", clientKeys.getPrivate().getEncoded()));

    KeyStore keyStore = KeyStore.getInstance("PKCS12");
    keyStore.load(null, null);
    keyStore.setKeyEntry("server", serverKeys.getPrivate(), new char[0], new Certificate[] {server, ca});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keyStore, new char[0]);
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);

    listener = (SSLServerSocket) context.getServerSocketFactory().createServerSocket();
    SSLParameters parameters = listener.getSSLParameters();
    parameters.setApplicationProtocols(new String[] {"h2"});
    parameters.setNeedClientAuth(true);
    listener.setSSLParameters(parameters);
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    Thread acceptor = new Thread(this::accept, "tls-frontend-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** Protocols negotiated by completed handshakes (ALPN), one entry per connection. */
  List<String> handshakes() {
    return List.copyOf(handshakes);
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        SSLSocket tls = (SSLSocket) listener.accept();
        sockets.add(tls);
        Thread t = new Thread(() -> serve(tls), "tls-frontend-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(SSLSocket tls) {
    try {
      tls.startHandshake();
      handshakes.add(tls.getApplicationProtocol());
      Socket backend = new Socket(InetAddress.getLoopbackAddress(), backendPort);
      sockets.add(backend);
      Thread up = new Thread(() -> pipe(tls, backend), "tls-frontend-up");
      up.setDaemon(true);
      up.start();
      pipe(backend, tls);
    } catch (IOException e) {
      closeQuietly(tls); // a refused handshake: the client sees it fail
    }
  }

  private static void pipe(Socket from, Socket to) {
    byte[] buffer = new byte[16384];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side went away
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    sockets.forEach(TlsFrontend::closeQuietly);
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static KeyPair keys() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(256);
    return generator.generateKeyPair();
  }

  static X509Certificate certificate(String subject, KeyPair keys, PrivateKey issuerKey, boolean ca)
      throws Exception {
    Instant now = Instant.now();
    JcaX509v3CertificateBuilder builder =
        new JcaX509v3CertificateBuilder(
            new X500Name("CN=inplace test Temporal CA"),
            BigInteger.valueOf(now.toEpochMilli() + subject.hashCode()),
            Date.from(now.minus(Duration.ofMinutes(5))),
            Date.from(now.plus(Duration.ofDays(1))),
            new X500Name(subject),
            keys.getPublic());
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
    if (!ca) {
      // Only the DNS name: a client that does not send it as the server name fails verification.
      builder.addExtension(Extension.subjectAlternativeName, false,
          new GeneralNames(new GeneralName(GeneralName.dNSName, SERVER_NAME)));
    }
    return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
  }

  static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }
}
