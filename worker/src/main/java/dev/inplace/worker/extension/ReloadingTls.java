package dev.inplace.worker.extension;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extension's TLS material, re-read when its files change (cert-manager renews the certificate
 * and rewrites {@code tls.crt}, {@code tls.key} and {@code ca.crt} in the mounted Secret). Each
 * handshake compares the files' bytes with what is loaded (three small files; hooks are called a few
 * times a minute); changed files are loaded, and a half-written or broken set keeps the previous one
 * and is logged. Each loaded set gets its own alias, so a handshake never mixes a chain and a key.
 */
final class ReloadingTls {
  private static final Logger log = LoggerFactory.getLogger(ReloadingTls.class);
  /** Generations kept for handshakes in flight across a reload. */
  private static final int KEPT = 4;

  private record Loaded(int generation, byte[] certBytes, byte[] keyBytes, byte[] caBytes,
      X509Certificate[] chain, PrivateKey key, X509ExtendedTrustManager trust) {
    String alias() {
      return "server-" + generation;
    }
  }

  private final Path cert;
  private final Path keyFile;
  private final Optional<Path> clientCa;
  private final ClientNames clientNames;
  private final Map<String, Loaded> generations = new LinkedHashMap<>();
  private volatile Loaded current;

  private ReloadingTls(Path cert, Path keyFile, Optional<Path> clientCa, ClientNames clientNames) {
    this.cert = cert;
    this.keyFile = keyFile;
    this.clientCa = clientCa;
    this.clientNames = clientNames;
  }

  /**
   * A server context over these files; fails now if they do not make a valid set. With a client CA,
   * a caller's certificate must chain to it and carry one of {@code clientNames}.
   */
  static SSLContext serverContext(Path cert, Path key, Optional<Path> clientCa, ClientNames clientNames) {
    ReloadingTls tls = new ReloadingTls(cert, key, clientCa, clientNames);
    try {
      tls.install(tls.load(1, read(cert), read(key), clientCa.isPresent() ? read(clientCa.get()) : null));
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(new X509ExtendedKeyManager[] {tls.new Keys()},
          clientCa.isPresent() ? new TrustManager[] {tls.new Trust()} : null, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot build TLS from " + cert + " and " + key + ": " + e.getMessage(), e);
    }
  }

  private synchronized void install(Loaded loaded) {
    generations.put(loaded.alias(), loaded);
    while (generations.size() > KEPT) {
      generations.remove(generations.keySet().iterator().next());
    }
    current = loaded;
  }

  /** The loaded set, after loading the files again if they changed. */
  private Loaded refresh() {
    Loaded now = current;
    byte[] certBytes;
    byte[] keyBytes;
    byte[] caBytes;
    try {
      certBytes = read(cert);
      keyBytes = read(keyFile);
      caBytes = clientCa.isPresent() ? read(clientCa.get()) : null;
    } catch (RuntimeException e) {
      log.warn("cannot read the extension's TLS files, keeping the loaded certificate: {}", e.getMessage());
      return now;
    }
    if (Arrays.equals(certBytes, now.certBytes()) && Arrays.equals(keyBytes, now.keyBytes())
        && Arrays.equals(caBytes, now.caBytes())) {
      return now;
    }
    synchronized (this) {
      if (current != now) {
        return current;
      }
      try {
        Loaded next = load(now.generation() + 1, certBytes, keyBytes, caBytes);
        install(next);
        log.info("extension TLS reloaded: certificate {} valid until {}", next.chain()[0].getSubjectX500Principal(),
            next.chain()[0].getNotAfter().toInstant());
        return next;
      } catch (GeneralSecurityException | RuntimeException e) {
        // cert-manager writes the files one by one: a mismatched pair now is complete on a later handshake.
        log.warn("the extension's TLS files changed but do not make a valid set yet, keeping the loaded one: {}",
            e.getMessage());
        return now;
      }
    }
  }

  private Loaded load(int generation, byte[] certBytes, byte[] keyBytes, byte[] caBytes)
      throws GeneralSecurityException {
    List<X509Certificate> chain = PemTls.certificates(cert, certBytes);
    if (chain.isEmpty()) {
      throw new IllegalArgumentException("no CERTIFICATE block in " + cert);
    }
    PrivateKey key = PemTls.privateKey(keyFile, keyBytes);
    if (!matches(chain.get(0), key)) {
      throw new IllegalArgumentException("the key in " + keyFile + " does not belong to the certificate in " + cert);
    }
    X509ExtendedTrustManager trust = null;
    if (caBytes != null) {
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      KeyStore store = PemTls.trustStore(PemTls.certificates(clientCa.get(), caBytes), clientCa.get());
      tmf.init(store);
      for (TrustManager tm : tmf.getTrustManagers()) {
        if (tm instanceof X509ExtendedTrustManager x) {
          trust = x;
        }
      }
    }
    return new Loaded(generation, certBytes, keyBytes, caBytes, chain.toArray(new X509Certificate[0]), key, trust);
  }

  /** Whether the key signs what the certificate's public key verifies. */
  private static boolean matches(X509Certificate certificate, PrivateKey key) throws GeneralSecurityException {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> "Ed25519";
    };
    byte[] probe = "inplace".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    java.security.Signature signer = java.security.Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(probe);
    byte[] signature = signer.sign();
    java.security.Signature verifier = java.security.Signature.getInstance(algorithm);
    verifier.initVerify(certificate.getPublicKey());
    verifier.update(probe);
    return verifier.verify(signature);
  }

  private static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  private synchronized Loaded generation(String alias) {
    return alias == null ? null : generations.get(alias);
  }

  /** Presents the newest certificate; each alias names one loaded set. */
  private final class Keys extends X509ExtendedKeyManager {
    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      return refresh().alias();
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return refresh().alias();
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return new String[] {current.alias()};
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      Loaded l = generation(alias);
      return l == null ? null : l.chain().clone();
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      Loaded l = generation(alias);
      return l == null ? null : l.key();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return null;
    }
  }

  /** Trusts the newest client CA bundle, for the callers named in {@link #clientNames} only. */
  private final class Trust extends X509ExtendedTrustManager {
    private X509ExtendedTrustManager trust() {
      return refresh().trust();
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
      trust().checkClientTrusted(chain, authType, socket);
      admit(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      trust().checkClientTrusted(chain, authType, engine);
      admit(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      ((X509TrustManager) trust()).checkClientTrusted(chain, authType);
      admit(chain);
    }

    private void admit(X509Certificate[] chain) throws CertificateException {
      try {
        clientNames.admit(chain[0]);
      } catch (CertificateException e) {
        log.warn("refused a hook caller: {}", e.getMessage());
        throw e;
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
      throw new CertificateException("the extension is a server only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("the extension is a server only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      throw new CertificateException("the extension is a server only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return current.trust().getAcceptedIssuers();
    }
  }
}
