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
}
