package dev.inplace.worker.crd;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The group, version and finalizer of inplace's custom resources, and their CRDs as generated at
 * build time (on the classpath under {@code META-INF/fabric8/}, committed under {@code deploy/crds/}).
 */
public final class InplaceCrds {
  public static final String GROUP = "upgrade.inplace.dev";
  public static final String VERSION = "v1alpha1";
  public static final String API_VERSION = GROUP + "/" + VERSION;

  /** Held by every CR whose run was started: removed once that run has ended. */
  public static final String FINALIZER = GROUP + "/run";

  /** Classpath resources of the generated CRDs, one per kind. */
  public static final List<String> CRD_RESOURCES =
      List.of(
          "META-INF/fabric8/controlplaneupgrades." + GROUP + "-v1.yml",
          "META-INF/fabric8/workersupgrades." + GROUP + "-v1.yml",
          "META-INF/fabric8/inplacehostprofiles." + GROUP + "-v1.yml");

  private InplaceCrds() {}

  /** The generated CRDs, read from the classpath. */
  public static List<CustomResourceDefinition> definitions() {
    return CRD_RESOURCES.stream().map(InplaceCrds::read).toList();
  }

  /** Creates (or replaces) the CRDs: for the sandbox and tests; a real cluster applies deploy/crds/. */
  public static void install(KubernetesClient client) {
    for (CustomResourceDefinition crd : definitions()) {
      client.apiextensions().v1().customResourceDefinitions().resource(crd).createOr(r -> r.update());
    }
  }

  private static CustomResourceDefinition read(String resource) {
    try (InputStream in = InplaceCrds.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no generated CRD " + resource + " on the classpath");
      }
      return Serialization.unmarshal(in, CustomResourceDefinition.class);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + resource, e);
    }
  }
}
