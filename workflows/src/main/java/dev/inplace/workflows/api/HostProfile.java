package dev.inplace.workflows.api;

/**
 * Where things live on a host. Defaults follow the standard k3s or kubeadm layout ({@link
 * Distribution#defaultProfile()}); every path can be overridden per cluster for customised hosts.
 *
 * @param binDir directory of the distribution binaries
 * @param imagesDir directory the runtime imports air-gap image archives from at start
 * @param stagingDir where artifacts are uploaded before the swap (same filesystem as binDir is best)
 * @param backupDir where the previous binaries are kept (A/B)
 * @param serverService service unit of a control-plane node
 * @param agentService service unit of a worker node
 * @param os the hosts' operating system profile ({@link HostOs#STANDARD} when null: requests
 *     recorded before the field existed)
 */
public record HostProfile(
    String binDir,
    String imagesDir,
    String stagingDir,
    String backupDir,
    String serverService,
    String agentService,
    HostOs os) {

  /** A standard (mutable) host. */
  public HostProfile(
      String binDir, String imagesDir, String stagingDir, String backupDir, String serverService, String agentService) {
    this(binDir, imagesDir, stagingDir, backupDir, serverService, agentService, HostOs.STANDARD);
  }

  public HostProfile {
    os = HostOs.orStandard(os);
    Requests.requireAbsolutePath("binDir", binDir);
    Requests.requireAbsolutePath("imagesDir", imagesDir);
    Requests.requireAbsolutePath("stagingDir", stagingDir);
    Requests.requireAbsolutePath("backupDir", backupDir);
    Requests.requireName("serverService", serverService);
    Requests.requireName("agentService", agentService);
  }

  /** The layout of a host installed with the k3s install script. */
  public static HostProfile k3sDefaults() {
    return new HostProfile(
        "/usr/local/bin",
        "/var/lib/rancher/k3s/agent/images",
        "/var/lib/inplace/staging",
        "/var/lib/inplace/backup",
        "k3s",
        "k3s-agent");
  }

  /**
   * The layout of a kubeadm host installed from the Kubernetes packages: kubeadm, kubelet and
   * kubectl in {@code /usr/bin}, one {@code kubelet} service on every node. Image archives are kept
   * in {@code imagesDir} and imported with {@code ctr -n k8s.io images import} (containerd does not
   * import a directory on start as k3s does).
   */
  public static HostProfile kubeadmDefaults() {
    return new HostProfile(
        "/usr/bin",
        "/var/lib/inplace/images",
        "/var/lib/inplace/staging",
        "/var/lib/inplace/backup",
        "kubelet",
        "kubelet");
  }

  /**
   * The layout of a host installed with {@code k0s install controller|worker}: the binary in {@code
   * /usr/local/bin} (k0smotron's {@code k0sInstallDir} default), the airgap image bundle in {@code
   * /var/lib/k0s/images/} (imported by k0s when it starts), services {@code k0scontroller} and {@code
   * k0sworker}.
   */
  public static HostProfile k0sDefaults() {
    return new HostProfile(
        "/usr/local/bin",
        "/var/lib/k0s/images",
        "/var/lib/inplace/staging",
        "/var/lib/inplace/backup",
        "k0scontroller",
        "k0sworker");
  }

  /** The same layout on hosts of {@code hostOs}. */
  public HostProfile withOs(HostOs hostOs) {
    return new HostProfile(binDir, imagesDir, stagingDir, backupDir, serverService, agentService, hostOs);
  }

  /** Whether the hosts are Kairos (A/B OS images) rather than standard. */
  public boolean kairos() {
    return os == HostOs.KAIROS;
  }

  public String serviceFor(NodeRole role) {
    return role == NodeRole.CONTROL_PLANE ? serverService : agentService;
  }
}
