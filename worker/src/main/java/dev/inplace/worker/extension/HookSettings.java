package dev.inplace.worker.extension;

import com.fasterxml.jackson.databind.JsonNode;
import dev.inplace.workflows.api.Distribution;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The ExtensionConfig's {@code spec.settings}, which CAPI sends in every request. One ExtensionConfig
 * serves many clusters, so names may contain {@code {cluster}}, replaced by the Machine's cluster
 * name; Secrets and the ConfigMap are read in the Machine's namespace. Defaults and meaning:
 * docs/capi-extension.md.
 */
record HookSettings(Map<String, String> values) {
  static final String SSH_USER = "sshUser";
  static final String SSH_PORT = "sshPort";
  static final String SSH_KEY_SECRET = "sshKeySecret";
  static final String KNOWN_HOSTS_SECRET = "knownHostsSecret";
  static final String JUMP_HOST = "jumpHost";
  static final String CATALOGUE_CONFIG_MAP = "catalogueConfigMap";
  static final String CATALOGUE_KEY = "catalogueKey";
  static final String DISTRIBUTION = "distribution";
  static final String ARCH = "arch";
  static final String OS = "os";
  static final String HOST_PROFILE = "hostProfile";
  static final String DRAIN_TIMEOUT_SECONDS = "drainTimeoutSeconds";
  static final String SKIP_DRAIN = "skipDrain";
  static final String READY_TIMEOUT_SECONDS = "readyTimeoutSeconds";
  static final String RETRY_AFTER_SECONDS = "retryAfterSeconds";

  static final List<String> KEYS =
      List.of(SSH_USER, SSH_PORT, SSH_KEY_SECRET, KNOWN_HOSTS_SECRET, JUMP_HOST, CATALOGUE_CONFIG_MAP, CATALOGUE_KEY,
          DISTRIBUTION, OS, HOST_PROFILE, ARCH, DRAIN_TIMEOUT_SECONDS, SKIP_DRAIN, READY_TIMEOUT_SECONDS,
          RETRY_AFTER_SECONDS);

  static final String DEFAULT_SSH_KEY_SECRET = "{cluster}-ssh-key";
  static final String DEFAULT_KNOWN_HOSTS_SECRET = "{cluster}-known-hosts";
  static final String DEFAULT_CATALOGUE_CONFIG_MAP = "inplace-releases";

  HookSettings {
    values = Map.copyOf(values);
  }

  /**
   * The {@code settings} object of a request; absent means every default. A key that is not one of
   * {@link #KEYS} (a typo such as {@code readyTimeout}) or a value that is not a string is refused,
   * naming it, rather than leaving the default in place without a word.
   */
  static HookSettings of(JsonNode request) {
    Map<String, String> values = new TreeMap<>();
    JsonNode settings = request.path("settings");
    if (settings.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = settings.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!KEYS.contains(e.getKey())) {
          throw new IllegalArgumentException("setting '" + e.getKey() + "' is not known (the ExtensionConfig's settings"
              + " are " + String.join(", ", KEYS) + ")");
        }
        if (e.getValue().isNull()) {
          continue;
        }
        if (!e.getValue().isTextual()) {
          throw new IllegalArgumentException("setting " + e.getKey() + " must be a string");
        }
        values.put(e.getKey(), e.getValue().asText());
      }
    } else if (!settings.isMissingNode() && !settings.isNull()) {
      throw new IllegalArgumentException("settings must be an object of strings");
    }
    return new HookSettings(values);
  }

  /** The SSH login; null when unset (the intake's default: root). */
  String sshUser() {
    return text(SSH_USER).orElse(null);
  }

  /** The SSH port; null when unset (the intake's default: 22). */
  Integer sshPort() {
    Long port = number(SSH_PORT, 1, 65535);
    return port == null ? null : port.intValue();
  }

  String sshKeySecret(String cluster) {
    return text(SSH_KEY_SECRET).orElse(DEFAULT_SSH_KEY_SECRET).replace("{cluster}", cluster);
  }

  String knownHostsSecret(String cluster) {
    return text(KNOWN_HOSTS_SECRET).orElse(DEFAULT_KNOWN_HOSTS_SECRET).replace("{cluster}", cluster);
  }

  Optional<String> jumpHost() {
    return text(JUMP_HOST);
  }

  String catalogueConfigMap(String cluster) {
    return text(CATALOGUE_CONFIG_MAP).orElse(DEFAULT_CATALOGUE_CONFIG_MAP).replace("{cluster}", cluster);
  }

  /** The catalogue's data key; null when unset (the intake's default: catalogue.json). */
  String catalogueKey() {
    return text(CATALOGUE_KEY).orElse(null);
  }

  /** {@code k3s} or {@code kubeadm}; empty means: from the bootstrap config's kind. */
  Optional<Distribution> distribution() {
    Optional<String> text = text(DISTRIBUTION);
    if (text.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Distribution.valueOf(text.get().toUpperCase(Locale.ROOT)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("setting " + DISTRIBUTION + " must be k3s or kubeadm, got '" + text.get() + "'");
    }
  }

  /**
   * {@code standard} or {@code kairos}: the hosts' OS profile (docs/kairos.md), as written; null when
   * unset. The intake checks it.
   */
  String os() {
    return text(OS).orElse(null);
  }

  /**
   * The name of the administrator's InplaceHostProfile the hosts' layout comes from, as written; null
   * when unset (the distribution's standard layout). The intake reads and checks it.
   */
  String hostProfile() {
    return text(HOST_PROFILE).orElse(null);
  }

  /** The nodes' architecture as written; null when unset (the intake's default: amd64). The intake checks it. */
  String arch() {
    return text(ARCH).orElse(null);
  }

  /** Null when unset (the intake's default: 300). */
  Long drainTimeoutSeconds() {
    return number(DRAIN_TIMEOUT_SECONDS, 1, 86_400);
  }

  /** Cordon without draining (single-node clusters, where there is nowhere to evict to); null when unset. */
  Boolean skipDrain() {
    Optional<String> v = text(SKIP_DRAIN);
    if (v.isEmpty()) {
      return null;
    }
    if (v.get().equalsIgnoreCase("true") || v.get().equalsIgnoreCase("false")) {
      return Boolean.valueOf(v.get().toLowerCase(Locale.ROOT));
    }
    throw new IllegalArgumentException("setting " + SKIP_DRAIN + " must be true or false, got '" + v.get() + "'");
  }

  /** Null when unset (the intake's default: 300). */
  Long readyTimeoutSeconds() {
    return number(READY_TIMEOUT_SECONDS, 1, 86_400);
  }

  /** How long CAPI waits before asking UpdateMachine again while a run is in flight. */
  int retryAfterSeconds() {
    Long seconds = number(RETRY_AFTER_SECONDS, 1, 600);
    return seconds == null ? 10 : seconds.intValue();
  }

  private Optional<String> text(String key) {
    String v = values.get(key);
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.trim());
  }

  /** The whole number {@code key} holds, from {@code min} to {@code max}; null when unset. */
  private Long number(String key, long min, long max) {
    Optional<String> v = text(key);
    if (v.isEmpty()) {
      return null;
    }
    try {
      long n = Long.parseLong(v.get());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "setting " + key + " must be a whole number from " + min + " to " + max + ", got '" + v.get() + "'");
  }
}
