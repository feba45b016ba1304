package dev.inplace.starter;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A real https server on 127.0.0.1 (certificate for 127.0.0.1 and localhost) serving the files of a
 * directory under {@code /releases/}, with redirects that a test sets; and a client that trusts
 * only its certificate and follows no redirect, as the CLI's. Records every path requested.
 */
final class LocalHttpsMirror implements AutoCloseable {
  final HttpClient client;
  final List<String> requested = Collections.synchronizedList(new ArrayList<>());
  private final HttpsServer server;
  private final Map<String, String> redirects = new ConcurrentHashMap<>();

  LocalHttpsMirror(Path directory) throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(256);
    KeyPair keys = generator.generateKeyPair();
    Instant now = Instant.now();
    JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(new X500Name("CN=127.0.0.1"), BigInteger.TWO,
        Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=127.0.0.1"),
        keys.getPublic());
    builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost")}));
    X509Certificate cert = new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("server", keys.getPrivate(), new char[0], new java.security.cert.Certificate[] {cert});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(store, new char[0]);
    SSLContext serverContext = SSLContext.getInstance("TLS");
    serverContext.init(kmf.getKeyManagers(), null, null);
    server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(serverContext));
    server.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      requested.add(exchange.getRequestURI().getRawPath());
      String to = redirects.get(path);
      Path file = path.startsWith("/releases/") ? directory.resolve(path.substring("/releases/".length())) : null;
      if (to != null) {
        exchange.getResponseHeaders().add("Location", to);
        exchange.sendResponseHeaders(302, -1);
      } else if (file != null && Files.isRegularFile(file)) {
        exchange.sendResponseHeaders(200, Files.size(file));
        try (OutputStream out = exchange.getResponseBody()) {
          Files.copy(file, out);
        }
      } else {
        exchange.sendResponseHeaders(404, -1);
      }
      exchange.close();
    });
    server.start();

    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("server", cert);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext clientContext = SSLContext.getInstance("TLS");
    clientContext.init(null, tmf.getTrustManagers(), null);
    client = HttpClient.newBuilder().sslContext(clientContext).followRedirects(HttpClient.Redirect.NEVER).build();
  }

  /** {@code https://HOST:PORT/PATH} on this server. */
  String url(String host, String path) {
    return "https://" + host + ":" + server.getAddress().getPort() + path;
  }

  /** Answers a GET of {@code path} with a 302 to {@code location}. */
  void redirect(String path, String location) {
    redirects.put(path, location);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
