package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;

/** Overrides of the host layout (HostProfile); each unset field keeps the standard k3s layout. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HostProfileSpec {
  static final String PATH_PATTERN = "^/[A-Za-z0-9._+/@-]*$";

  @Pattern("^(standard|kairos)$")
  @JsonPropertyDescription("Operating system of the hosts: standard (default: binaries swapped in place) or kairos"
      + " (immutable A/B: kairos-agent upgrade writes the release's OS image, the host reboots into it, the previous"
      + " image is the fallback; docs/kairos.md).")
  private String os;

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Directory of the distribution binaries (default /usr/local/bin).")
  private String binDir;

  public String getOs() {
    return os;
  }

  public HostProfileSpec setOs(String os) {
    this.os = os;
    return this;
  }

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Directory air-gap image archives are imported from (default /var/lib/rancher/k3s/agent/images).")
  private String imagesDir;

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Where artifacts are staged before the swap (default /var/lib/inplace/staging).")
  private String stagingDir;

  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription("Where the previous binaries are kept (default /var/lib/inplace/backup).")
  private String backupDir;

  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Service unit of a control-plane node (default k3s).")
  private String serverService;

  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Service unit of a worker node (default k3s-agent).")
  private String agentService;

  public String getBinDir() {
    return binDir;
  }

  public HostProfileSpec setBinDir(String binDir) {
    this.binDir = binDir;
    return this;
  }

  public String getImagesDir() {
    return imagesDir;
  }

  public HostProfileSpec setImagesDir(String imagesDir) {
    this.imagesDir = imagesDir;
    return this;
  }

  public String getStagingDir() {
    return stagingDir;
  }

  public HostProfileSpec setStagingDir(String stagingDir) {
    this.stagingDir = stagingDir;
    return this;
  }

  public String getBackupDir() {
    return backupDir;
  }

  public HostProfileSpec setBackupDir(String backupDir) {
    this.backupDir = backupDir;
    return this;
  }

  public String getServerService() {
    return serverService;
  }

  public HostProfileSpec setServerService(String serverService) {
    this.serverService = serverService;
    return this;
  }

  public String getAgentService() {
    return agentService;
  }

  public HostProfileSpec setAgentService(String agentService) {
    this.agentService = agentService;
    return this;
  }
}
