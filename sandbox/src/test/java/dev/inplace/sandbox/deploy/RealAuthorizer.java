package dev.inplace.sandbox.deploy;

import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestbedBinaries;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * kube-apiserver's own RBAC authorizer judging the worker's requests: an overlay's RBAC objects
 * (ServiceAccount, Roles, ClusterRoles and their bindings) applied to the test bed's real API server,
 * then one SubjectAccessReview per request as the worker's ServiceAccount. Nothing here reads the
 * rules itself.
 */
final class RealAuthorizer implements AutoCloseable {
  private static final Set<Class<? extends HasMetadata>> RBAC_KINDS =
      Set.of(ServiceAccount.class, Role.class, RoleBinding.class, ClusterRole.class, ClusterRoleBinding.class);

  private final KubeControlPlane plane;
  private final KubernetesClient admin;

  RealAuthorizer() throws IOException {
    Path dir = Files.createTempDirectory("inplace-rbac-");
    plane = KubeControlPlane.start("rbac", dir, TestbedBinaries.locate());
    Config config = Config.fromKubeconfig(Files.readString(plane.adminKubeconfig()));
    config.setRequestRetryBackoffLimit(0);
    admin = new KubernetesClientBuilder().withConfig(config).build();
  }

  /** Applies {@code objects}' RBAC (and the namespaces they live in), returning what was applied. */
  List<HasMetadata> apply(List<HasMetadata> objects, Collection<String> extraNamespaces) {
    List<HasMetadata> applied = new ArrayList<>();
    for (String ns : extraNamespaces) {
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).serverSideApply();
    }
    for (HasMetadata o : objects) {
      if (o instanceof Namespace) {
        admin.resource(o).serverSideApply();
      }
    }
    for (HasMetadata o : objects) {
      if (RBAC_KINDS.contains(o.getClass())) {
        admin.resource(o).serverSideApply();
        applied.add(o);
      }
    }
    return applied;
  }

  /** Removes what {@link #apply} applied, so the next overlay starts from nothing. */
  void remove(List<HasMetadata> applied) {
    for (HasMetadata o : applied) {
      admin.resource(o).delete();
    }
  }

  /** A client acting as {@code namespace/serviceAccount} (the admin impersonating it), as the worker would. */
  KubernetesClient clientAs(String namespace, String serviceAccount) throws IOException {
    Config config = Config.fromKubeconfig(Files.readString(plane.adminKubeconfig()));
    config.setRequestRetryBackoffLimit(0);
    config.setImpersonateUsername("system:serviceaccount:" + namespace + ":" + serviceAccount);
    config.setImpersonateGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated");
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  KubernetesClient admin() {
    return admin;
  }

  /** Whether the API server allows {@code request} to {@code namespace/serviceAccount}. */
  boolean allows(String namespace, String serviceAccount, ApiRequest request) {
    SubjectAccessReviewBuilder review = new SubjectAccessReviewBuilder().withNewSpec()
        .withUser("system:serviceaccount:" + namespace + ":" + serviceAccount)
        .withGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated")
        .endSpec();
    if (request.resource().isEmpty()) {
      review.editSpec().withNewNonResourceAttributes().withPath(request.path()).withVerb(request.verb())
          .endNonResourceAttributes().endSpec();
    } else {
      review.editSpec().withNewResourceAttributes().withVerb(request.verb()).withGroup(request.apiGroup())
          .withResource(request.resource()).withSubresource(request.subresource()).withNamespace(request.namespace())
          .endResourceAttributes().endSpec();
    }
    SubjectAccessReview answer = admin.authorization().v1().subjectAccessReview().create(review.build());
    return Boolean.TRUE.equals(answer.getStatus().getAllowed());
  }

  @Override
  public void close() {
    admin.close();
    plane.close();
  }
}
