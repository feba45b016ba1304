package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/**
 * How the cluster's hosts are reached: Secrets are named here and read by the activities; their
 * contents never enter a workflow or a status.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SshSpec {
  @Default("root")
  @Pattern("^[a-z_][a-z0-9_.-]*$")
  @JsonPropertyDescription("Login user; remote steps run under sudo -n when it is not root.")
  private String user;

  @Min(1)
  @Max(65535)
  @Default("22")
  @JsonPropertyDescription("SSH port of every host of the cluster.")
  private Integer port;

  @Required
  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Secret holding the private key under data key ssh-privatekey.")
  private String privateKeySecret;

  @Required
  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Secret holding the pinned host keys (OpenSSH known_hosts lines) under data key known_hosts.")
  private String knownHostsSecret;

  @Pattern("^[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
  @JsonPropertyDescription("Optional bastion host[:port], reached with the same key and known_hosts.")
  private String jumpHost;

  public String getUser() {
    return user;
  }

  public SshSpec setUser(String user) {
    this.user = user;
    return this;
  }

  public Integer getPort() {
    return port;
  }

  public SshSpec setPort(Integer port) {
    this.port = port;
    return this;
  }

  public String getPrivateKeySecret() {
    return privateKeySecret;
  }

  public SshSpec setPrivateKeySecret(String privateKeySecret) {
    this.privateKeySecret = privateKeySecret;
    return this;
  }

  public String getKnownHostsSecret() {
    return knownHostsSecret;
  }

  public SshSpec setKnownHostsSecret(String knownHostsSecret) {
    this.knownHostsSecret = knownHostsSecret;
    return this;
  }

  public String getJumpHost() {
    return jumpHost;
  }

  public SshSpec setJumpHost(String jumpHost) {
    this.jumpHost = jumpHost;
    return this;
  }
}
