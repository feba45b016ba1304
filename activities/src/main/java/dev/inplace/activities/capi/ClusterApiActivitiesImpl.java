package dev.inplace.activities.capi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.activities.kube.KubeFailures;
import dev.inplace.activities.kube.KubeMdc;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.temporal.failure.ApplicationFailure;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link ClusterApiActivities} against the management cluster's CAPI objects (v1beta2). */
public final class ClusterApiActivitiesImpl implements ClusterApiActivities {
  private static final Logger log = LoggerFactory.getLogger(ClusterApiActivitiesImpl.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubeClients clients;

  public ClusterApiActivitiesImpl(KubeClients clients) {
    this.clients = clients;
  }

  @Override
  @SuppressWarnings("try") // the MDC scope is the resource's whole purpose
  public MachineVersionResult recordMachineVersion(MachineVersionRequest request) {
    String machine = request.namespace() + "/" + request.machineName();
    try (KubeMdc mdc = KubeMdc.of("machine", machine)) {
      try {
        return recordVersion(request, "Machine " + machine);
      } catch (ApplicationFailure e) {
        log.warn("recordMachineVersion failed: {}: {}", e.getType(), e.getOriginalMessage());
        throw e;
      }
    }
  }

  private MachineVersionResult recordVersion(MachineVersionRequest request, String what) {
    try {
      Resource<GenericKubernetesResource> resource =
          clients
              .management()
              .genericKubernetesResources(CapiResources.MACHINE)
              .inNamespace(request.namespace())
              .withName(request.machineName());
      GenericKubernetesResource observed = resource.get();
      if (observed == null) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.MACHINE_NOT_FOUND, what + " not found");
      }
      String previous = specVersion(observed);
      if (request.version().equals(previous)) {
        log.info("{} already at version {}", what, previous);
        return new MachineVersionResult(previous, false);
      }
      resource.patch(PatchContext.of(PatchType.JSON_MERGE), versionPatch(observed, request));
      log.info("{} spec.version {} -> {}", what, previous, request.version());
      return new MachineVersionResult(previous, true);
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, UpgradeFailures.MACHINE_NOT_FOUND, what);
    }
  }

  private static String specVersion(GenericKubernetesResource machine) {
    Object spec = machine.getAdditionalProperties().get("spec");
    if (spec instanceof Map<?, ?> map && map.get("version") instanceof String version) {
      return version;
    }
    return null;
  }

  /** Guarded by the observed resourceVersion: a concurrent change makes it a retryable 409. */
  private static String versionPatch(
      GenericKubernetesResource observed, MachineVersionRequest request) {
    ObjectNode patch = JSON.createObjectNode();
    patch.putObject("metadata").put("resourceVersion", observed.getMetadata().getResourceVersion());
    patch.putObject("spec").put("version", request.version());
    try {
      return JSON.writeValueAsString(patch);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a Machine patch", e);
    }
  }
}
