package dev.inplace.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.temporal.envconfig.ClientConfigProfile;
import io.temporal.envconfig.ClientConfigTLS;
import io.temporal.envconfig.LoadClientConfigProfileOptions;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * How to reach Temporal, read exactly as the {@code temporal} CLI reads it: the CLI's profile file
 * ({@code TEMPORAL_CONFIG_FILE}, else {@code ~/.config/temporalio/temporal.toml}; profile
 * {@code TEMPORAL_PROFILE}, else {@code default}) overlaid by the {@code TEMPORAL_*} variables, through
 * Temporal's own {@code temporal-envconfig}. The first wave's {@code TEMPORAL_TLS_CERT} and
 * {@code TEMPORAL_TLS_KEY} still work, with a deprecation warning.
 *
 * <p>The API key and the contents of key files never appear in a message: {@link #toString()} says
 * only whether they are set, and problems name variables and paths.
 */
public final class TemporalSettings {
  public static final String ADDRESS = "TEMPORAL_ADDRESS";
  public static final String NAMESPACE = "TEMPORAL_NAMESPACE";
  public static final String API_KEY = "TEMPORAL_API_KEY";
  public static final String TLS = "TEMPORAL_TLS";
  public static final String TLS_CLIENT_CERT_PATH = "TEMPORAL_TLS_CLIENT_CERT_PATH";
  public static final String TLS_CLIENT_KEY_PATH = "TEMPORAL_TLS_CLIENT_KEY_PATH";
  public static final String TLS_SERVER_CA_CERT_PATH = "TEMPORAL_TLS_SERVER_CA_CERT_PATH";
  public static final String TLS_SERVER_NAME = "TEMPORAL_TLS_SERVER_NAME";
  public static final String CONFIG_FILE = "TEMPORAL_CONFIG_FILE";
  public static final String PROFILE = "TEMPORAL_PROFILE";
  /** Deprecated first-wave names of the client certificate and key paths. */
  public static final String LEGACY_TLS_CERT = "TEMPORAL_TLS_CERT";

  public static final String LEGACY_TLS_KEY = "TEMPORAL_TLS_KEY";
  /**
   * {@code true} allows a plaintext connection to a frontend that is not on loopback; without it,
   * such a connection is refused: anyone who reaches an unauthenticated frontend can start runs.
   */
  public static final String ALLOW_PLAINTEXT = "INPLACE_TEMPORAL_PLAINTEXT";

  /** Every variable read here; docs/configuration.md lists each (a test checks). */
  public static final List<String> KEYS =
      List.of(ADDRESS, NAMESPACE, API_KEY, TLS, TLS_CLIENT_CERT_PATH, TLS_CLIENT_KEY_PATH,
          TLS_SERVER_CA_CERT_PATH, TLS_SERVER_NAME, CONFIG_FILE, PROFILE, LEGACY_TLS_CERT, LEGACY_TLS_KEY,
          ALLOW_PLAINTEXT);

  private final ClientConfigProfile profile;

  private TemporalSettings(ClientConfigProfile profile) {
    this.profile = profile;
  }

  /**
   * Reads and checks the settings; every problem goes into one {@link IllegalArgumentException}.
   * Deprecation notices go to {@code warnings}.
   */
  public static TemporalSettings fromEnvironment(Map<String, String> env, Consumer<String> warnings) {
    List<String> problems = new ArrayList<>();
    Map<String, String> effective = new HashMap<>(env);
    legacy(effective, LEGACY_TLS_CERT, TLS_CLIENT_CERT_PATH, warnings);
    legacy(effective, LEGACY_TLS_KEY, TLS_CLIENT_KEY_PATH, warnings);
    ClientConfigProfile profile;
    try {
      profile = ClientConfigProfile.load(LoadClientConfigProfileOptions.newBuilder().setEnvOverrides(effective).build());
    } catch (JsonProcessingException e) {
      // Only the location: the message of a TOML parser may quote the file, API key included.
      throw new IllegalArgumentException("the temporal CLI profile file (" + fileHint(env) + ") is not valid TOML"
          + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr()));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the temporal CLI profile file (" + fileHint(env) + "): "
          + e.getClass().getSimpleName());
    } catch (IllegalArgumentException e) {
      // "Unable to find profile X in config data": names the profile only.
      throw new IllegalArgumentException(PROFILE + ": " + e.getMessage());
    }
    TemporalSettings settings = new TemporalSettings(profile);
    settings.address().ifPresent(
        a -> {
          if (!a.matches("[A-Za-z0-9.\\-\\[\\]:]+:\\d{1,5}")) {
            problems.add(ADDRESS + " must be host:port, got '" + a + "'");
          }
        });
    ClientConfigTLS tls = profile.getTls();
    if (tls != null) {
      boolean cert = present(tls.getClientCertPath()) || tls.getClientCertData() != null;
      boolean key = present(tls.getClientKeyPath()) || tls.getClientKeyData() != null;
      if (cert != key) {
        problems.add(TLS_CLIENT_CERT_PATH + " and " + TLS_CLIENT_KEY_PATH + " must be set together");
      }
      file(tls.getClientCertPath(), TLS_CLIENT_CERT_PATH, problems);
      file(tls.getClientKeyPath(), TLS_CLIENT_KEY_PATH, problems);
      file(tls.getServerCACertPath(), TLS_SERVER_CA_CERT_PATH, problems);
    }
    String allowPlaintext = env.getOrDefault(ALLOW_PLAINTEXT, "false").trim();
    if (!allowPlaintext.equals("true") && !allowPlaintext.equals("false")) {
      problems.add(ALLOW_PLAINTEXT + " must be true or false, got '" + allowPlaintext + "'");
    }
    settings.address().filter(a -> a.contains(":") && !settings.tls() && !loopback(a) && !allowPlaintext.equals("true"))
        .ifPresent(a ->
        problems.add("a plaintext connection to " + a + " is refused: whoever reaches an unauthenticated frontend can"
            + " start runs that act as root on nodes. Use TLS (" + TLS + "=true, with " + TLS_SERVER_CA_CERT_PATH
            + " for a private CA, and mTLS client certificates or " + API_KEY + "), or set " + ALLOW_PLAINTEXT
            + "=true if the network alone protects this frontend"));
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return settings;
  }

  /** {@code localhost}, {@code 127.x.x.x} or {@code [::1]}, with a port. */
  static boolean loopback(String address) {
    String host = address.substring(0, address.lastIndexOf(':'));
    return host.equals("localhost") || host.matches("127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}")
        || host.equals("[::1]");
  }

  private static void legacy(Map<String, String> env, String old, String current, Consumer<String> warnings) {
    String value = env.get(old);
    if (value == null || value.isBlank()) {
      return;
    }
    if (env.get(current) == null || env.get(current).isBlank()) {
      env.put(current, value.trim());
      warnings.accept(old + " is deprecated: set " + current + " instead (as the temporal CLI does)");
    } else {
      warnings.accept(old + " is deprecated and ignored: " + current + " is set");
    }
  }

  private static void file(String path, String key, List<String> problems) {
    if (present(path) && !Files.isRegularFile(Path.of(path))) {
      problems.add(key + ": no file " + path);
    }
  }

  private static boolean present(String s) {
    return s != null && !s.isBlank();
  }

  private static String fileHint(Map<String, String> env) {
    String file = env.get(CONFIG_FILE);
    return present(file) ? file : "~/.config/temporalio/temporal.toml";
  }

  /** The frontend's {@code host:port}, from {@code TEMPORAL_ADDRESS} or the profile. */
  public Optional<String> address() {
    return Optional.ofNullable(profile.getAddress()).map(String::trim).filter(a -> !a.isEmpty());
  }

  public String namespace() {
    String ns = profile.getNamespace();
    return present(ns) ? ns.trim() : "default";
  }

  public boolean hasApiKey() {
    return present(profile.getApiKey());
  }

  /** Whether the connection uses TLS: a TLS block not disabled, or an API key (which needs TLS). */
  public boolean tls() {
    ClientConfigTLS tls = profile.getTls();
    if (tls != null) {
      return !Boolean.TRUE.equals(tls.isDisabled());
    }
    return hasApiKey();
  }

  /** Options for the service stubs: target, API key, TLS context (reads the key files now), server name. */
  public WorkflowServiceStubsOptions stubsOptions() {
    try {
      return profile.toWorkflowServiceStubsOptions();
    } catch (RuntimeException e) {
      // envconfig wraps file and PEM errors; the cause names the problem, never the key material.
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IllegalArgumentException("cannot set up TLS to Temporal from " + describeTls() + ": "
          + cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : " (" + firstLine(cause.getMessage()) + ")"), e);
    }
  }

  private static String firstLine(String message) {
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }

  private String describeTls() {
    ClientConfigTLS tls = profile.getTls();
    if (!tls()) {
      return "no TLS";
    }
    if (tls == null) {
      return "TLS (system CAs)";
    }
    List<String> parts = new ArrayList<>();
    if (present(tls.getClientCertPath())) {
      parts.add("client cert " + tls.getClientCertPath());
    } else if (tls.getClientCertData() != null) {
      parts.add("client cert (inline)");
    }
    if (present(tls.getServerCACertPath())) {
      parts.add("server CA " + tls.getServerCACertPath());
    } else if (tls.getServerCACertData() != null) {
      parts.add("server CA (inline)");
    }
    if (present(tls.getServerName())) {
      parts.add("server name " + tls.getServerName());
    }
    return parts.isEmpty() ? "TLS (system CAs)" : "TLS with " + String.join(", ", parts);
  }

  @Override
  public String toString() {
    // Never the profile's own toString: it prints the API key.
    return "address=" + address().orElse("(none)") + ", namespace=" + namespace()
        + ", apiKey=" + (hasApiKey() ? "(set)" : "(none)") + ", tls=" + describeTls();
  }
}
