package dev.inplace.worker.extension;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How the worker serves the CAPI runtime extension (docs/capi-extension.md), read from the
 * environment like {@code WorkerConfig}. Every key is listed in docs/configuration.md (a test checks).
 *
 * @param bindAddress address the HTTPS server listens on
 * @param port its port (the Service maps 443 to it)
 * @param tlsCert PEM certificate chain the server presents (cert-manager's {@code tls.crt})
 * @param tlsKey PEM private key of that certificate (cert-manager's {@code tls.key}; PKCS#8, or
 *     PKCS#1 RSA / SEC1 EC)
 * @param clientCa clients must present a certificate signed by one of these CAs (the CAPI managers'
 *     {@code --runtime-extension-client-cert-file}); required unless {@code allowUnauthenticated}
 * @param clientNames of the certificates that CA signed, only those whose common name or a DNS name
 *     is listed here may call (the CA's issuer may sign for others too)
 * @param maxBodyBytes larger requests are answered 413 without being read
 * @param readTimeout a request (headers and body) must arrive within this, or the connection is closed
 * @param threads requests handled at once; more wait in a short queue, beyond it connections are closed
 * @param allowUnauthenticated serve without client certificates (an explicit, logged opt-out of mTLS)
 */
public record ExtensionOptions(
    String bindAddress,
    int port,
    Path tlsCert,
    Path tlsKey,
    Optional<Path> clientCa,
    List<String> clientNames,
    int maxBodyBytes,
    Duration readTimeout,
    int threads,
    boolean allowUnauthenticated) {

  public static final String EXTENSION = "INPLACE_EXTENSION";
  public static final String BIND_ADDRESS = "INPLACE_EXTENSION_BIND_ADDRESS";
  public static final String PORT = "INPLACE_EXTENSION_PORT";
  public static final String TLS_CERT = "INPLACE_EXTENSION_TLS_CERT";
  public static final String TLS_KEY = "INPLACE_EXTENSION_TLS_KEY";
  public static final String CLIENT_CA = "INPLACE_EXTENSION_CLIENT_CA";
  public static final String CLIENT_NAMES = "INPLACE_EXTENSION_CLIENT_NAMES";
  public static final String MAX_BODY_BYTES = "INPLACE_EXTENSION_MAX_BODY_BYTES";
  public static final String READ_TIMEOUT_SECONDS = "INPLACE_EXTENSION_READ_TIMEOUT_SECONDS";
  public static final String THREADS = "INPLACE_EXTENSION_THREADS";
  public static final String ALLOW_UNAUTHENTICATED = "INPLACE_EXTENSION_ALLOW_UNAUTHENTICATED";

  /** Every key {@link #fromEnvironment} reads; docs/configuration.md lists each (a test checks). */
  public static final List<String> KEYS =
      List.of(EXTENSION, BIND_ADDRESS, PORT, TLS_CERT, TLS_KEY, CLIENT_CA, CLIENT_NAMES, MAX_BODY_BYTES,
          READ_TIMEOUT_SECONDS, THREADS, ALLOW_UNAUTHENTICATED);

  public static final int DEFAULT_PORT = 9443;
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
  public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(10);
  public static final int DEFAULT_THREADS = 8;

  public ExtensionOptions {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("extension port must be 0..65535, got " + port);
    }
    if (tlsCert == null || tlsKey == null) {
      throw new IllegalArgumentException("the extension needs a TLS certificate and key");
    }
    clientCa = clientCa == null ? Optional.empty() : clientCa;
    if (clientCa.isEmpty() && !allowUnauthenticated) {
      throw new IllegalArgumentException("the extension needs a client CA (mutual TLS) unless unauthenticated"
          + " callers are explicitly allowed");
    }
    clientNames = List.copyOf(clientNames == null ? ClientNames.DEFAULTS : clientNames);
    ClientNames.of(clientNames); // refuses an empty list or a name that is not one word
    if (maxBodyBytes < 1024) {
      throw new IllegalArgumentException("the extension's body limit must be at least 1024 bytes");
    }
    if (readTimeout == null || readTimeout.toSeconds() < 1) {
      throw new IllegalArgumentException("the extension's read timeout must be at least 1 second");
    }
    if (threads < 1) {
      throw new IllegalArgumentException("the extension needs at least one thread");
    }
  }

  /** Loopback, an ephemeral port, default limits, mutual TLS with {@code clientCa}: for tests and the sandbox. */
  public static ExtensionOptions loopback(Path tlsCert, Path tlsKey, Path clientCa) {
    return new ExtensionOptions("127.0.0.1", 0, tlsCert, tlsKey, Optional.of(clientCa), ClientNames.DEFAULTS,
        DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT, DEFAULT_THREADS, false);
  }

  /** Loopback without client certificates (the explicit opt-out): for tests. */
  public static ExtensionOptions loopbackUnauthenticated(Path tlsCert, Path tlsKey) {
    return new ExtensionOptions("127.0.0.1", 0, tlsCert, tlsKey, Optional.empty(), ClientNames.DEFAULTS,
        DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT, DEFAULT_THREADS, true);
  }

  public ExtensionOptions withReadTimeout(Duration timeout) {
    return new ExtensionOptions(bindAddress, port, tlsCert, tlsKey, clientCa, clientNames, maxBodyBytes, timeout,
        threads, allowUnauthenticated);
  }

  public ExtensionOptions withMaxBodyBytes(int limit) {
    return new ExtensionOptions(bindAddress, port, tlsCert, tlsKey, clientCa, clientNames, limit, readTimeout,
        threads, allowUnauthenticated);
  }

  /** Only certificates with one of these names (common name or DNS name) may call. */
  public ExtensionOptions withClientNames(List<String> names) {
    return new ExtensionOptions(bindAddress, port, tlsCert, tlsKey, clientCa, names, maxBodyBytes, readTimeout,
        threads, allowUnauthenticated);
  }

  /**
   * The extension settings, or empty unless {@code INPLACE_EXTENSION=true}. Collects every problem
   * into one message, as WorkerConfig does.
   */
  public static Optional<ExtensionOptions> fromEnvironment(Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    Optional<String> enabled = value(env, EXTENSION);
    if (enabled.isEmpty() || enabled.get().equalsIgnoreCase("false")) {
      return Optional.empty();
    }
    if (!enabled.get().equalsIgnoreCase("true")) {
      throw new IllegalArgumentException(
          "invalid extension configuration: " + EXTENSION + " must be true or false, got '" + enabled.get() + "'");
    }
    Optional<Path> cert = value(env, TLS_CERT).map(Path::of);
    Optional<Path> key = value(env, TLS_KEY).map(Path::of);
    if (cert.isEmpty() || key.isEmpty()) {
      problems.add(TLS_CERT + " and " + TLS_KEY + " are required when " + EXTENSION + "=true (CAPI only calls https)");
    }
    cert.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(TLS_CERT + ": no file " + p));
    key.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(TLS_KEY + ": no file " + p));
    Optional<Path> ca = value(env, CLIENT_CA).map(Path::of);
    ca.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(CLIENT_CA + ": no file " + p));
    Optional<String> open = value(env, ALLOW_UNAUTHENTICATED);
    if (open.isPresent() && !open.get().equalsIgnoreCase("true") && !open.get().equalsIgnoreCase("false")) {
      problems.add(ALLOW_UNAUTHENTICATED + " must be true or false, got '" + open.get() + "'");
    }
    boolean allowUnauthenticated = open.isPresent() && open.get().equalsIgnoreCase("true");
    if (ca.isEmpty() && !allowUnauthenticated) {
      problems.add(CLIENT_CA + " is required: the hooks are served with mutual TLS only (the CAPI managers'"
          + " client certificate CA); set " + ALLOW_UNAUTHENTICATED + "=true to serve without it");
    }
    List<String> clientNames = ClientNames.DEFAULTS;
    Optional<String> names = value(env, CLIENT_NAMES);
    if (names.isPresent()) {
      clientNames = java.util.Arrays.stream(names.get().split(",")).map(String::strip).filter(n -> !n.isEmpty()).toList();
      try {
        ClientNames.of(clientNames);
      } catch (IllegalArgumentException e) {
        problems.add(CLIENT_NAMES + ": " + e.getMessage() + " (a comma-separated list, got '" + names.get() + "')");
        clientNames = ClientNames.DEFAULTS;
      }
    }
    int port = number(env, PORT, DEFAULT_PORT, 1, 65535, problems);
    int maxBody = number(env, MAX_BODY_BYTES, DEFAULT_MAX_BODY_BYTES, 1024, 20 << 20, problems);
    int readTimeout = number(env, READ_TIMEOUT_SECONDS, (int) DEFAULT_READ_TIMEOUT.toSeconds(), 1, 300, problems);
    int threads = number(env, THREADS, DEFAULT_THREADS, 1, 256, problems);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid extension configuration: " + String.join("; ", problems));
    }
    return Optional.of(
        new ExtensionOptions(
            value(env, BIND_ADDRESS).orElse("0.0.0.0"),
            port,
            cert.get(),
            key.get(),
            ca,
            clientNames,
            maxBody,
            Duration.ofSeconds(readTimeout),
            threads,
            allowUnauthenticated));
  }

  private static Optional<String> value(Map<String, String> env, String key) {
    String v = env.get(key);
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.trim());
  }

  private static int number(Map<String, String> env, String key, int fallback, int min, int max, List<String> problems) {
    Optional<String> v = value(env, key);
    if (v.isEmpty()) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v.get());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(key + " must be a whole number from " + min + " to " + max + ", got '" + v.get() + "'");
    return fallback;
  }
}
