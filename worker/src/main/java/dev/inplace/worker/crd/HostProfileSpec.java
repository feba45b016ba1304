package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The hosts of an upgrade resource: their OS profile, and the {@link InplaceHostProfile} their
 * layout comes from (unset: the distribution's standard layout). Host paths are not free text here
 * (issue 34): the path fields an older schema had are kept only so that a resource still setting
 * them is refused, naming the fix, rather than silently upgraded with the standard layout.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HostProfileSpec {
  static final String REFUSED = "Refused: host paths are not set in an upgrade resource. An administrator creates an"
      + " InplaceHostProfile with them and the resource names it in hostProfile.name (docs/crd-reference.md).";

  @Pattern("^(standard|kairos)$")
  @JsonPropertyDescription("Operating system of the hosts: standard (default: binaries swapped in place) or kairos"
      + " (immutable A/B: kairos-agent upgrade writes the release's OS image, the host reboots into it, the previous"
      + " image is the fallback; docs/kairos.md).")
  private String os;

  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("Name of the cluster-scoped InplaceHostProfile (admin-owned) the host layout comes from:"
      + " binaries, image, staging and backup directories, service units. Unset: the distribution's standard layout.")
  private String name;

  @JsonPropertyDescription(REFUSED)
  private String binDir;

  @JsonPropertyDescription(REFUSED)
  private String imagesDir;

  @JsonPropertyDescription(REFUSED)
  private String stagingDir;

  @JsonPropertyDescription(REFUSED)
  private String backupDir;

  @JsonPropertyDescription(REFUSED)
  private String serverService;

  @JsonPropertyDescription(REFUSED)
  private String agentService;

  public String getOs() {
    return os;
  }

  public HostProfileSpec setOs(String os) {
    this.os = os;
    return this;
  }

  public String getName() {
    return name;
  }

  public HostProfileSpec setName(String name) {
    this.name = name;
    return this;
  }

  /** The refused layout fields this spec sets, by name, in the schema's order (empty when none). */
  public Map<String, String> refusedLayoutFields() {
    Map<String, String> set = new LinkedHashMap<>();
    put(set, "binDir", binDir);
    put(set, "imagesDir", imagesDir);
    put(set, "stagingDir", stagingDir);
    put(set, "backupDir", backupDir);
    put(set, "serverService", serverService);
    put(set, "agentService", agentService);
    return set;
  }

  private static void put(Map<String, String> set, String field, String value) {
    if (value != null) {
      set.put(field, value);
    }
  }

  // The refused fields: set only by tests that prove the refusal.

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
