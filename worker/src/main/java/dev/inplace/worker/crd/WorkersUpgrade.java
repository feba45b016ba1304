package dev.inplace.worker.crd;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn.Type;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * Upgrades the workers of one or more MachineDeployments in place: one WorkersUpgrade run per
 * MachineDeployment, each a sliding window of {@code maxUnavailable} nodes.
 */
@Group(InplaceCrds.GROUP)
@Version(InplaceCrds.VERSION)
@Kind("WorkersUpgrade")
@Plural("workersupgrades")
@Singular("workersupgrade")
@ShortNames("iwu")
@Categories("inplace")
@AdditionalPrinterColumn(name = "Cluster", jsonPath = ".spec.clusterName", type = Type.STRING)
@AdditionalPrinterColumn(name = "Version", jsonPath = ".spec.version", type = Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = Type.STRING)
@AdditionalPrinterColumn(name = "Upgraded", jsonPath = ".status.progress", type = Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = Type.DATE)
@AdditionalPrinterColumn(name = "Message", jsonPath = ".status.message", type = Type.STRING, priority = 1)
public class WorkersUpgrade extends CustomResource<WorkersUpgradeSpec, UpgradeStatus> implements Namespaced {
  public static final String KIND = "WorkersUpgrade";

  /** A new resource to create: {@code client.resource(WorkersUpgrade.of("fleet", "edge-1-to-v1-31", spec)).create()}. */
  public static WorkersUpgrade of(String namespace, String name, WorkersUpgradeSpec spec) {
    WorkersUpgrade cr = new WorkersUpgrade();
    cr.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).build());
    cr.setSpec(spec);
    return cr;
  }
}
