package dev.inplace.worker.crd;

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
 * A custom host layout, owned by the cluster's administrators: cluster-scoped, so only who may
 * create cluster-wide objects writes one (an upgrade resource's writer only names it, in {@code
 * spec.hostProfile.name}). The worker only reads it, and refuses a directory outside the allowlist
 * ({@code HostPaths}, docs/security.md).
 */
@Group(InplaceCrds.GROUP)
@Version(InplaceCrds.VERSION)
@Kind(InplaceHostProfile.KIND)
@Plural("inplacehostprofiles")
@Singular("inplacehostprofile")
@ShortNames("ihp")
@Categories("inplace")
public class InplaceHostProfile extends CustomResource<HostLayoutSpec, Void> {
  public static final String KIND = "InplaceHostProfile";

  /** A new profile to create: {@code client.resource(InplaceHostProfile.of("opt-bin", spec)).create()}. */
  public static InplaceHostProfile of(String name, HostLayoutSpec spec) {
    InplaceHostProfile profile = new InplaceHostProfile();
    profile.setMetadata(new ObjectMetaBuilder().withName(name).build());
    profile.setSpec(spec);
    return profile;
  }
}
