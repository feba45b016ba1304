package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.ResourceFields.annotation;
import static dev.inplace.activities.capi.ResourceFields.hasAnnotation;
import static dev.inplace.activities.capi.ResourceFields.name;
import static dev.inplace.activities.capi.ResourceFields.string;
import static dev.inplace.workflows.api.ClusterApiActivities.PAUSED_ANNOTATION;
import static dev.inplace.workflows.api.ClusterApiActivities.PAUSED_BY_ANNOTATION;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The patch sequences that tell CAPI a control plane or a worker pool is at a new version, so none
 * of its controllers starts a replacement rollout (DESIGN.md s.5, capi-contracts.md s.3.3).
 *
 * <p>Each step observes first and is skipped when already done, so a run that crashed half-way
 * converges when it runs again. The object is paused with {@link
 * dev.inplace.workflows.api.ClusterApiActivities#PAUSED_ANNOTATION} while its version changes and
 * the run's owner is recorded next to it; only that owner unpauses it. An object someone else
 * paused keeps its pause untouched.
 */
final class VersionBookkeeping {
  private static final Logger log = LoggerFactory.getLogger(VersionBookkeeping.class);

  /** Who holds an object's pause. */
  enum Pause {
    NONE,
    OURS,
    SOMEONE_ELSE
  }

  /** One object in the management cluster. */
  private record Target(ResourceDefinitionContext type, String namespace, String name) {
    @Override
    public String toString() {
      return CapiObjectStore.describe(type, namespace, name);
    }
  }

  private final CapiObjectStore store;
  private final ClusterInventoryReader inventory;

  VersionBookkeeping(CapiObjectStore store, ClusterInventoryReader inventory) {
    this.store = store;
    this.inventory = inventory;
  }

  /**
   * Pauses the control-plane object for a whole ControlPlaneUpgrade run: once a Machine records the
   * new version while the object still names the old one, its controller would see that Machine as
   * outdated and replace it. Left as is when this owner (or someone else) already paused it.
   */
  List<String> pauseControlPlane(String namespace, ObjectRef ref, String owner) {
    Target cp = new Target(CapiResources.controlPlane(ref), namespace, ref.name());
    GenericKubernetesResource observed = existing(cp);
    Pause pause = pauseOf(observed, owner);
    if (pause != Pause.NONE) {
      return List.of();
    }
    patch(cp, observed, pausePatch(observed.getMetadata().getResourceVersion(), owner));
    return List.of("pause " + cp + " (" + PAUSED_BY_ANNOTATION + "=" + owner + ")");
  }

  /**
   * Removes this owner's pause from the control-plane object and leaves everything else: a run that
   * changed no node gives the object back as it found it. Someone else's pause stays.
   */
  List<String> releaseControlPlane(String namespace, ObjectRef ref, String owner) {
    Target cp = new Target(CapiResources.controlPlane(ref), namespace, ref.name());
    GenericKubernetesResource observed = existing(cp);
    if (pauseOf(observed, owner) != Pause.OURS) {
      return List.of();
    }
    patch(cp, observed, unpausePatch());
    log.info("{}: unpaused (no node changed)", cp);
    return List.of("unpause " + cp);
  }

  /** Sets the control-plane object's {@code spec.version}; returns the patches done, in order. */
  List<String> recordControlPlane(String namespace, ObjectRef ref, String version, String owner) {
    Target cp = new Target(CapiResources.controlPlane(ref), namespace, ref.name());
    GenericKubernetesResource observed = existing(cp);
    String current = string(observed, "spec", "version");
    return underPause(
        cp,
        observed,
        owner,
        !version.equals(current),
        (latest, patches) -> {
          GenericKubernetesResource after = patch(cp, latest, specVersionPatch(version));
          patches.add(cp + " spec.version " + shown(current) + " -> " + version);
          return after;
        });
  }

  /**
   * Sets {@code spec.template.spec.version} on the newest MachineSet, then on the
   * MachineDeployment: in that order, so the MachineSet never lags behind its deployment's
   * template. A k0smotron K0sWorkerConfigTemplate that pins a version (its {@code
   * spec.template.spec.version}) gets the new one first, so a worker created later bootstraps at
   * the version the pool runs. Returns the patches done, in order.
   */
  List<String> recordPool(
      String namespace, String machineDeployment, String version, String owner) {
    Target md = new Target(CapiResources.MACHINE_DEPLOYMENT, namespace, machineDeployment);
    GenericKubernetesResource observed = existing(md);
    GenericKubernetesResource newest = inventory.newestMachineSet(namespace, machineDeployment);
    Target ms =
        newest == null ? null : new Target(CapiResources.MACHINE_SET, namespace, name(newest));
    String msVersion = newest == null ? null : templateVersion(newest);
    String mdVersion = templateVersion(observed);
    boolean msChanges = newest != null && !version.equals(msVersion);
    boolean mdChanges = !version.equals(mdVersion);
    if (newest == null) {
      log.info("{} has no MachineSet: only its template is set", md);
    }
    GenericKubernetesResource workerConfig = pinningWorkerConfigTemplate(namespace, observed);
    String configVersion = workerConfig == null ? null : templateVersion(workerConfig);
    boolean configChanges = workerConfig != null && !version.equals(configVersion);
    return underPause(
        md,
        observed,
        owner,
        msChanges || mdChanges || configChanges,
        (latest, patches) -> {
          if (configChanges) {
            Target config =
                new Target(CapiResources.K0S_WORKER_CONFIG_TEMPLATE, namespace, name(workerConfig));
            patch(config, workerConfig, templateVersionPatch(version));
            patches.add(config + " spec.template.spec.version " + shown(configVersion) + " -> " + version);
          }
          if (msChanges) {
            patch(ms, newest, templateVersionPatch(version));
            patches.add(ms + " spec.template.spec.version " + shown(msVersion) + " -> " + version);
          }
          if (!mdChanges) {
            return latest;
          }
          GenericKubernetesResource after = patch(md, latest, templateVersionPatch(version));
          patches.add(md + " spec.template.spec.version " + shown(mdVersion) + " -> " + version);
          return after;
        });
  }

  /**
   * The MachineDeployment's K0sWorkerConfigTemplate when it pins a version, else null (no such
   * template, another bootstrap kind, or a template that leaves the version to the Machine).
   */
  private GenericKubernetesResource pinningWorkerConfigTemplate(
      String namespace, GenericKubernetesResource md) {
    String kind = string(md, "spec", "template", "spec", "bootstrap", "configRef", "kind");
    String name = string(md, "spec", "template", "spec", "bootstrap", "configRef", "name");
    if (!CapiResources.K0S_WORKER_CONFIG_TEMPLATE.getKind().equals(kind) || name == null) {
      return null;
    }
    GenericKubernetesResource template =
        store.get(CapiResources.K0S_WORKER_CONFIG_TEMPLATE, namespace, name, UpgradeFailures.INVALID_REQUEST);
    if (template == null) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.INVALID_REQUEST,
          CapiObjectStore.describe(CapiResources.K0S_WORKER_CONFIG_TEMPLATE, namespace, name) + " not found");
    }
    String pinned = templateVersion(template);
    return pinned == null || pinned.isEmpty() ? null : template;
  }

  static Pause pauseOf(GenericKubernetesResource object, String owner) {
    if (!hasAnnotation(object, PAUSED_ANNOTATION)) {
      return Pause.NONE;
    }
    return owner.equals(annotation(object, PAUSED_BY_ANNOTATION)) ? Pause.OURS : Pause.SOMEONE_ELSE;
  }

  /** Patches made while {@code target} is paused; returns the target as it is afterwards. */
  private interface Changes {
    GenericKubernetesResource apply(GenericKubernetesResource target, List<String> patches);
  }

  /**
   * Pauses {@code target} (unless paused already), makes {@code changes} when {@code needed}, and
   * unpauses it if this owner holds the pause. Nothing needed and no pause of ours: no patch.
   */
  private List<String> underPause(
      Target target,
      GenericKubernetesResource observed,
      String owner,
      boolean needed,
      Changes changes) {
    List<String> patches = new ArrayList<>();
    Pause pause = pauseOf(observed, owner);
    GenericKubernetesResource latest = observed;
    if (needed) {
      if (pause == Pause.NONE) {
        String readAt = observed.getMetadata().getResourceVersion();
        latest = patch(target, latest, pausePatch(readAt, owner));
        patches.add("pause " + target + " (" + PAUSED_BY_ANNOTATION + "=" + owner + ")");
        pause = Pause.OURS;
      } else if (pause == Pause.SOMEONE_ELSE) {
        log.info(
            "{} is paused by {}: changing it without touching that pause",
            target,
            shown(annotation(observed, PAUSED_BY_ANNOTATION)));
      }
      latest = changes.apply(latest, patches);
    }
    if (pause == Pause.OURS) {
      patch(target, latest, unpausePatch());
      patches.add("unpause " + target);
    }
    if (patches.isEmpty()) {
      log.info("{} already records the version; nothing to patch", target);
    } else {
      log.info("{}: {}", target, patches);
    }
    return patches;
  }

  private GenericKubernetesResource existing(Target target) {
    GenericKubernetesResource object =
        store.get(
            target.type(), target.namespace(), target.name(), UpgradeFailures.INVALID_REQUEST);
    if (object == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, target + " not found");
    }
    return object;
  }

  private GenericKubernetesResource patch(
      Target target, GenericKubernetesResource current, ObjectNode patch) {
    return store.patch(target.type(), current, patch, UpgradeFailures.INVALID_REQUEST);
  }

  private static String templateVersion(GenericKubernetesResource object) {
    return string(object, "spec", "template", "spec", "version");
  }

  /**
   * Guarded by the observed resourceVersion: if anyone changed the object since we looked (maybe
   * pausing it themselves) the API server answers 409, and the retry observes again.
   */
  static ObjectNode pausePatch(String resourceVersion, String owner) {
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    ObjectNode metadata = patch.putObject("metadata");
    metadata.put("resourceVersion", resourceVersion);
    metadata.putObject("annotations").put(PAUSED_ANNOTATION, "").put(PAUSED_BY_ANNOTATION, owner);
    return patch;
  }

  static ObjectNode unpausePatch() {
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    ObjectNode annotations = patch.putObject("metadata").putObject("annotations");
    annotations.putNull(PAUSED_ANNOTATION);
    annotations.putNull(PAUSED_BY_ANNOTATION);
    return patch;
  }

  static ObjectNode specVersionPatch(String version) {
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    patch.putObject("spec").put("version", version);
    return patch;
  }

  static ObjectNode templateVersionPatch(String version) {
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    patch.putObject("spec").putObject("template").putObject("spec").put("version", version);
    return patch;
  }

  private static String shown(String value) {
    return value == null ? "(unset)" : value;
  }
}
