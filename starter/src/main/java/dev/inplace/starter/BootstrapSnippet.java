package dev.inplace.starter;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The bootstrap snippet that makes a node publish its SSH host public keys on its own Node
 * ({@link NodePublishedKeys}): the script {@code publish-host-keys.sh}, and for each bootstrap
 * config kind the {@code files} entry that installs it plus the command that runs it once the node
 * has joined. deploy/bootstrap/ holds the rendered copies (BootstrapSnippetTest keeps them equal).
 */
final class BootstrapSnippet {
  static final String SCRIPT_RESOURCE = "bootstrap/publish-host-keys.sh";
  static final String INSTALLED_PATH = "/usr/local/sbin/inplace-publish-host-keys";

  /** A bootstrap config kind: where its spec takes files and the commands run after the node joined. */
  enum Kind {
    KUBEADM("KubeadmConfig", "postKubeadmCommands",
        "KubeadmConfigTemplate spec.template.spec, or KubeadmControlPlane(Template) spec.kubeadmConfigSpec"),
    K3S("KThreesConfig", "postK3sCommands",
        "KThreesConfigTemplate spec.template.spec, or KThreesControlPlane spec.kthreesConfigSpec"),
    K0S("K0sWorkerConfig", "postStartCommands",
        "K0sWorkerConfigTemplate spec.template.spec (controllers run no kubelet unless --enable-worker: no Node)");

    final String configKind;
    final String commandsField;
    final String where;

    Kind(String configKind, String commandsField, String where) {
      this.configKind = configKind;
      this.commandsField = commandsField;
      this.where = where;
    }

    /** The name of its rendered file under deploy/bootstrap/. */
    String fileName() {
      return configKind.toLowerCase(Locale.ROOT) + ".yaml";
    }
  }

  private BootstrapSnippet() {}

  /** The script, as shipped. */
  static String script() {
    try (InputStream in = BootstrapSnippet.class.getResourceAsStream(SCRIPT_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("resource " + SCRIPT_RESOURCE + " is missing from the build");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The spec fields to merge into a {@code kind} bootstrap config: {@code files} and the post-join command. */
  static String yaml(Kind kind) {
    StringBuilder yaml = new StringBuilder()
        .append("# inplace: publish this host's SSH host keys on its Node (docs/host-keys.md).\n")
        .append("# Merge into the ").append(kind.configKind).append(" spec: ").append(kind.where).append(".\n")
        .append("# Append to lists the spec already has; `inplace hosts bootstrap-snippet ")
        .append(kind.name().toLowerCase(Locale.ROOT)).append("` prints this.\n")
        .append("files:\n")
        .append("- path: ").append(INSTALLED_PATH).append("\n")
        .append("  owner: root:root\n")
        .append("  permissions: \"0755\"\n")
        .append("  content: |\n");
    script().lines().forEach(line -> yaml.append(line.isEmpty() ? "" : "    " + line).append("\n"));
    return yaml.append(kind.commandsField).append(":\n")
        .append("- ").append(INSTALLED_PATH).append("\n")
        .toString();
  }
}
