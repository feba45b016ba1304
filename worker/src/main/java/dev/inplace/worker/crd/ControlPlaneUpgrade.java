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
 * Upgrades a cluster's control-plane nodes in place, one at a time (a ControlPlaneUpgrade run).
 * Short name {@code icpu} ({@code cpu} is EKS Anywhere's).
 */
@Group(InplaceCrds.GROUP)
@Version(InplaceCrds.VERSION)
@Kind("ControlPlaneUpgrade")
@Plural("controlplaneupgrades")
@Singular("controlplaneupgrade")
@ShortNames("icpu")
@Categories("inplace")
@AdditionalPrinterColumn(name = "Cluster", jsonPath = ".spec.clusterName", type = Type.STRING)
@AdditionalPrinterColumn(name = "Version", jsonPath = ".spec.version", type = Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = Type.STRING)
@AdditionalPrinterColumn(name = "Upgraded", jsonPath = ".status.progress", type = Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = Type.DATE)
@AdditionalPrinterColumn(name = "Message", jsonPath = ".status.message", type = Type.STRING, priority = 1)
public class ControlPlaneUpgrade extends CustomResource<ControlPlaneUpgradeSpec, UpgradeStatus>
    implements Namespaced {
  public static final String KIND = "ControlPlaneUpgrade";

  /** A new resource to create: {@code client.resource(ControlPlaneUpgrade.of("fleet", "edge-1-to-v1-31", spec)).create()}. */
  public static ControlPlaneUpgrade of(String namespace, String name, ControlPlaneUpgradeSpec spec) {
    ControlPlaneUpgrade cr = new ControlPlaneUpgrade();
    cr.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).build());
    cr.setSpec(spec);
    return cr;
  }
}
