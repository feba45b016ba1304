package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.inplace.workflows.api.Distribution;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * What both kinds ask for: the cluster, the target version and how to reach and treat its nodes.
 * Frozen when the run starts; afterwards only {@code paused} may change. Fields left out take the
 * defaults the schema declares (the watcher applies the same defaults, so a server that does not
 * default, such as a mock, behaves alike).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public abstract class UpgradeSpec<S extends UpgradeSpec<S>> {
  /** A Kubernetes object name (also safe in shell scripts and workflow IDs). */
  public static final String NAME_PATTERN = "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$";

  public static final String VERSION_PATTERN = "^v\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.+-]+)?$";

  @Required
  @Pattern(NAME_PATTERN)
  @Size(max = 253)
  @JsonPropertyDescription("Name of the CAPI Cluster in this namespace.")
  private String clusterName;

  @Required
  @Pattern(VERSION_PATTERN)
  @JsonPropertyDescription("Target Kubernetes version as the distribution prints it, e.g. v1.31.2+k3s1.")
  private String version;

  @Default("K3S")
  @JsonPropertyDescription("Distribution the cluster runs: K3S, KUBEADM or K0S.")
  private Distribution distribution;

  @Default("amd64")
  @Pattern("^[a-z0-9_]+$")
  @JsonPropertyDescription("Architecture of the nodes and of the artifacts to install.")
  private String arch;

  @Required
  @JsonPropertyDescription("ConfigMap in this namespace holding the release catalogue JSON.")
  private CatalogueReference releaseCatalogue;

  @Required
  @JsonPropertyDescription("How to reach the cluster's hosts over SSH (references to Secrets only).")
  private SshSpec ssh;

  @JsonPropertyDescription("Overrides of the host layout; unset fields keep the standard k3s layout.")
  private HostProfileSpec hostProfile;

  @JsonPropertyDescription("How each node is drained.")
  private DrainSpec drain;

  @JsonPropertyDescription("When new nodes may start; nodes already started may finish after it closes.")
  private MaintenanceWindowSpec maintenanceWindow;

  @Min(0)
  @Default("0")
  @JsonPropertyDescription("Pause after each node finishes before the next one starts.")
  private Long soakSeconds;

  @Min(1)
  @Default("300")
  @JsonPropertyDescription("How long a node may take to report Ready at the target version.")
  private Long readyTimeoutSeconds;

  @Min(0)
  @Default("0")
  @JsonPropertyDescription("Free bytes to require on the staging filesystem beyond the artifacts.")
  private Long minFreeBytes;

  @Default("false")
  @JsonPropertyDescription("True: start no new node (nodes in flight finish); false again resumes. The one field that may change after the run started.")
  private Boolean paused;

  @Default("false")
  @JsonPropertyDescription("True: only plan (status.plan: ordered nodes, steps, remote commands); nothing is started or changed.")
  private Boolean dryRun;

  public String getClusterName() {
    return clusterName;
  }

  public S setClusterName(String clusterName) {
    this.clusterName = clusterName;
    return self();
  }

  public String getVersion() {
    return version;
  }

  public S setVersion(String version) {
    this.version = version;
    return self();
  }

  public Distribution getDistribution() {
    return distribution;
  }

  public S setDistribution(Distribution distribution) {
    this.distribution = distribution;
    return self();
  }

  public String getArch() {
    return arch;
  }

  public S setArch(String arch) {
    this.arch = arch;
    return self();
  }

  public CatalogueReference getReleaseCatalogue() {
    return releaseCatalogue;
  }

  public S setReleaseCatalogue(CatalogueReference releaseCatalogue) {
    this.releaseCatalogue = releaseCatalogue;
    return self();
  }

  public SshSpec getSsh() {
    return ssh;
  }

  public S setSsh(SshSpec ssh) {
    this.ssh = ssh;
    return self();
  }

  public HostProfileSpec getHostProfile() {
    return hostProfile;
  }

  public S setHostProfile(HostProfileSpec hostProfile) {
    this.hostProfile = hostProfile;
    return self();
  }

  public DrainSpec getDrain() {
    return drain;
  }

  public S setDrain(DrainSpec drain) {
    this.drain = drain;
    return self();
  }

  public MaintenanceWindowSpec getMaintenanceWindow() {
    return maintenanceWindow;
  }

  public S setMaintenanceWindow(MaintenanceWindowSpec maintenanceWindow) {
    this.maintenanceWindow = maintenanceWindow;
    return self();
  }

  public Long getSoakSeconds() {
    return soakSeconds;
  }

  public S setSoakSeconds(Long soakSeconds) {
    this.soakSeconds = soakSeconds;
    return self();
  }

  public Long getReadyTimeoutSeconds() {
    return readyTimeoutSeconds;
  }

  public S setReadyTimeoutSeconds(Long readyTimeoutSeconds) {
    this.readyTimeoutSeconds = readyTimeoutSeconds;
    return self();
  }

  public Long getMinFreeBytes() {
    return minFreeBytes;
  }

  public S setMinFreeBytes(Long minFreeBytes) {
    this.minFreeBytes = minFreeBytes;
    return self();
  }

  public Boolean getPaused() {
    return paused;
  }

  public S setPaused(Boolean paused) {
    this.paused = paused;
    return self();
  }

  public Boolean getDryRun() {
    return dryRun;
  }

  public S setDryRun(Boolean dryRun) {
    this.dryRun = dryRun;
    return self();
  }

  @SuppressWarnings("unchecked") // S is this class's own type by construction
  private S self() {
    return (S) this;
  }

  /** {@code paused} with its default. */
  public boolean paused() {
    return Boolean.TRUE.equals(paused);
  }

  /** {@code dryRun} with its default. */
  public boolean dryRun() {
    return Boolean.TRUE.equals(dryRun);
  }
}
