package dev.inplace.sandbox.hosts;

import java.util.Locale;

/** Which SSH server plays each sandbox node. */
public enum HostServer {
  /** Apache MINA SSHD embedded in the sandbox process (the default: no install needed). */
  MINA,
  /** One real OpenSSH {@code sshd} process per node (Debian's openssh-server). */
  OPENSSH;

  /** {@code mina} or {@code openssh}, as given to {@code --hosts}. */
  public static HostServer parse(String text) {
    for (HostServer kind : values()) {
      if (kind.cliName().equals(text)) {
        return kind;
      }
    }
    throw new IllegalArgumentException("--hosts must be mina or openssh, got '" + text + "'");
  }

  public String cliName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
