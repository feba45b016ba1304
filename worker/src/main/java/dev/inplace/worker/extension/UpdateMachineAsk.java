package dev.inplace.worker.extension;

import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.IntakeRequest;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.MachineInfo;
import java.util.List;
import java.util.Map;

/**
 * The hook's translation for the one intake: an UpdateMachine request, its Machine and the
 * ExtensionConfig's settings as an {@link IntakeRequest} for that Machine alone. Settings left unset
 * stay null, so the intake applies the same defaults as for a custom resource; a setting that cannot
 * be read is {@code InvalidRequest}, as a bad spec field is.
 */
final class UpdateMachineAsk {
  /** How a refusal names what the hook was given (the fields a custom resource calls {@code spec.*}). */
  private static final Map<String, String> FIELDS = Map.of(
      "version", "desired.machine.spec.version",
      "arch", "setting " + HookSettings.ARCH,
      "hostProfile.os", "setting " + HookSettings.OS,
      "hostProfile.name", "setting " + HookSettings.HOST_PROFILE,
      "ssh", "the SSH settings (" + String.join(", ", HookSettings.SSH_USER, HookSettings.SSH_PORT,
          HookSettings.SSH_KEY_SECRET, HookSettings.KNOWN_HOSTS_SECRET, HookSettings.JUMP_HOST) + ")",
      "drain", "the drain settings (" + HookSettings.DRAIN_TIMEOUT_SECONDS + ", " + HookSettings.SKIP_DRAIN + ")",
      "readyTimeoutSeconds", "setting " + HookSettings.READY_TIMEOUT_SECONDS);

  private UpdateMachineAsk() {}

  /**
   * @param bootstrapKind the desired bootstrap config's kind (decides the distribution unless the
   *     {@code distribution} setting does)
   * @param machine the Machine to update, with what its Node reports now
   */
  static IntakeRequest of(
      HookSettings settings, String bootstrapKind, ClusterRef cluster, String target, MachineInfo machine)
      throws IntakeRefusal {
    try {
      Distribution distribution = CanUpdateHook.distributionOf(bootstrapKind, settings, target)
          .orElseThrow(() -> IntakeRefusal.invalid("bootstrap config kind '" + bootstrapKind
              + "' is neither KThreesConfig, KubeadmConfig nor a k0smotron config; set the distribution setting"));
      return new IntakeRequest(
          cluster,
          target,
          distribution,
          settings.arch(),
          new IntakeRequest.Host(settings.os(), settings.hostProfile()),
          new IntakeRequest.Ssh(settings.sshUser(), settings.sshPort(), settings.sshKeySecret(cluster.name()),
              settings.knownHostsSecret(cluster.name()), settings.jumpHost().orElse(null)),
          new IntakeRequest.Drain(settings.drainTimeoutSeconds(), null, null, null, settings.skipDrain()),
          settings.readyTimeoutSeconds(),
          null,
          null,
          new IntakeRequest.Catalogue(settings.catalogueConfigMap(cluster.name()), settings.catalogueKey()),
          List.of(machine),
          // Not read here: CAPI never updates a one-Machine control plane in place (capi-extension.md s.6).
          false,
          // The run records only its own Machine: on a ClusterClass cluster CAPI moved the version itself.
          IntakeRequest.Recording.MACHINE_ONLY,
          field -> FIELDS.getOrDefault(field, "setting " + field));
    } catch (IllegalArgumentException e) {
      throw IntakeRefusal.invalid(e.getMessage());
    }
  }
}
