package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;

/**
 * An {@link InplaceHostProfile}'s layout: each unset field keeps the distribution's standard
 * layout. The schema takes absolute paths; the worker then refuses any directory outside the
 * allowlist of its field (docs/crd-reference.md, "InplaceHostProfile").
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HostLayoutSpec {
  static final String PATH_PATTERN = "^/[A-Za-z0-9._+/@-]*$";

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Directory of the distribution binaries: one of the distribution's own (k3s /usr/local/bin"
      + " or /opt/bin; kubeadm /usr/bin or /usr/local/bin; k0s /usr/local/bin or /usr/bin). Default: the first.")
  private String binDir;

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Directory image archives are imported from: the distribution's own (k3s"
      + " /var/lib/rancher/k3s/agent/images, kubeadm /var/lib/inplace/images, k0s /var/lib/k0s/images).")
  private String imagesDir;

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Where artifacts are staged before the swap: a directory under /var/lib/inplace/"
      + " (default /var/lib/inplace/staging).")
  private String stagingDir;

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Where the previous binaries are kept: a directory under /var/lib/inplace/, apart from"
      + " stagingDir (default /var/lib/inplace/backup).")
  private String backupDir;

  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Service unit of a control-plane node (default: the distribution's, e.g. k3s).")
  private String serverService;

  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Service unit of a worker node (default: the distribution's, e.g. k3s-agent).")
  private String agentService;

  public String getBinDir() {
    return binDir;
  }

  public HostLayoutSpec setBinDir(String binDir) {
    this.binDir = binDir;
    return this;
  }

  public String getImagesDir() {
    return imagesDir;
  }

  public HostLayoutSpec setImagesDir(String imagesDir) {
    this.imagesDir = imagesDir;
    return this;
  }

  public String getStagingDir() {
    return stagingDir;
  }

  public HostLayoutSpec setStagingDir(String stagingDir) {
    this.stagingDir = stagingDir;
    return this;
  }

  public String getBackupDir() {
    return backupDir;
  }

  public HostLayoutSpec setBackupDir(String backupDir) {
    this.backupDir = backupDir;
    return this;
  }

  public String getServerService() {
    return serverService;
  }

  public HostLayoutSpec setServerService(String serverService) {
    this.serverService = serverService;
    return this;
  }

  public String getAgentService() {
    return agentService;
  }

  public HostLayoutSpec setAgentService(String agentService) {
    this.agentService = agentService;
    return this;
  }
}
