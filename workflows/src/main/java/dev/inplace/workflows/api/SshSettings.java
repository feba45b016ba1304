package dev.inplace.workflows.api;

/**
 * How to reach a cluster's hosts over SSH. Only references travel through workflows: the private key
 * and the pinned host keys stay in Secrets of the cluster's namespace and are read by activities.
 *
 * @param user login user; when not {@code root}, remote steps run under {@code sudo -n}
 * @param port SSH port on every host of the cluster
 * @param privateKeySecret Secret holding the private key under data key {@code ssh-privatekey}
 * @param knownHostsSecret Secret holding OpenSSH known_hosts lines under data key {@code known_hosts}
 * @param jumpHost optional {@code host[:port]} of a bastion, reached with the same key and known_hosts
 */
public record SshSettings(
    String user, int port, String privateKeySecret, String knownHostsSecret, String jumpHost) {
  public static final String PRIVATE_KEY_DATA_KEY = "ssh-privatekey";
  public static final String KNOWN_HOSTS_DATA_KEY = "known_hosts";

  public SshSettings {
    Requests.requireText("ssh user", user);
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("ssh port must be 1..65535, got " + port);
    }
    Requests.requireName("ssh private key secret", privateKeySecret);
    Requests.requireName("ssh known_hosts secret", knownHostsSecret);
  }

  public boolean needsSudo() {
    return !"root".equals(user);
  }

  /** A bastion as {@code host[:port]}: the one parse every door and the connector use. */
  public record JumpHost(String host, int port) {
    public static final int DEFAULT_PORT = 22;

    /** The host and port (22 when none is given); an {@link IllegalArgumentException} naming the form otherwise. */
    public static JumpHost parse(String text) {
      String value = text == null ? "" : text.trim();
      int colon = value.lastIndexOf(':');
      String host = colon < 0 ? value : value.substring(0, colon);
      String port = colon < 0 ? Integer.toString(DEFAULT_PORT) : value.substring(colon + 1);
      if (host.isEmpty() || host.chars().anyMatch(Character::isWhitespace) || !port.matches("[0-9]{1,5}")
          || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
        throw new IllegalArgumentException("jump host must be host[:port] with a port from 1 to 65535, got '" + text + "'");
      }
      return new JumpHost(host, Integer.parseInt(port));
    }
  }

  /**
   * Why a jump host is not {@code host[:port]} ({@link JumpHost#parse}), or empty when it is one or
   * none is given. Every door checks it before a run starts. Not checked in the constructor: runs
   * already recorded with such a value must still load.
   */
  public static java.util.Optional<String> jumpHostProblem(String jumpHost) {
    if (jumpHost == null || jumpHost.isBlank()) {
      return java.util.Optional.empty();
    }
    try {
      JumpHost.parse(jumpHost);
      return java.util.Optional.empty();
    } catch (IllegalArgumentException e) {
      return java.util.Optional.of(e.getMessage());
    }
  }
}
