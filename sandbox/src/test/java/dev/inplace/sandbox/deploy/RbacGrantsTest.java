package dev.inplace.sandbox.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.kube.ApiRequest;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The RBAC checker decides like the API server, and fails when a rule the code uses is removed. */
class RbacGrantsTest {
  private static final String NS = "inplace-system";
  private static final String SA = "inplace-worker";

  private static final ApiRequest PATCH_MACHINE =
      ApiRequest.of("PATCH", "/apis/cluster.x-k8s.io/v1beta2/namespaces/fleet/machines/edge-1-cp-0");
  private static final ApiRequest GET_SECRET = ApiRequest.of("GET", "/api/v1/namespaces/fleet/secrets/edge-1-ssh-key");
  /** A Secret in the namespace deploy/cluster-namespaces/list/namespaces.yaml lists. */
  private static final ApiRequest GET_LISTED_SECRET =
      ApiRequest.of("GET", "/api/v1/namespaces/default/secrets/edge-1-ssh-key");
  private static final ApiRequest UPDATE_STATUS = ApiRequest.of(
      "PUT", "/apis/upgrade.inplace.dev/v1alpha1/namespaces/fleet/workersupgrades/edge-1-workers/status");
  private static final ApiRequest WATCH_ALL =
      ApiRequest.of("GET", "/apis/upgrade.inplace.dev/v1alpha1/workersupgrades?allowWatchBookmarks=true&watch=true");

  @Test
  void requestsParseIntoVerbGroupResourceSubresourceAndNamespace() {
    assertEquals(new ApiRequest("PATCH", "patch", "cluster.x-k8s.io", "machines", "", "fleet", ""), PATCH_MACHINE.withoutPath());
    assertEquals(new ApiRequest("GET", "get", "", "secrets", "", "fleet", ""), GET_SECRET.withoutPath());
    assertEquals("workersupgrades/status", UPDATE_STATUS.rbacResource());
    assertEquals("update", UPDATE_STATUS.verb());
    assertEquals("watch", WATCH_ALL.verb());
    assertEquals("", WATCH_ALL.namespace());
    assertEquals("list", ApiRequest.of("GET", "/api/v1/namespaces/fleet/pods?labelSelector=a%3Db").verb());
    assertEquals("create", ApiRequest.of("POST", "/api/v1/namespaces/fleet/events").verb());
    assertEquals("list", ApiRequest.of("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions").verb());
    assertEquals("deletecollection", ApiRequest.of("DELETE", "/api/v1/namespaces/fleet/pods").verb());
    assertFalse(ApiRequest.of("GET", "/apis/cluster.x-k8s.io/v1beta2").isResourceRequest());
    assertFalse(ApiRequest.of("GET", "/readyz").isResourceRequest());
  }

  @Test
  void theRenderedDefaultRbacGrantsWhatTheWorkerDoesAndReadsSecretsOnlyInListedNamespaces() {
    RbacGrants grants = RbacGrants.of(Kustomize.render("default"), NS, SA);

    assertEquals(List.of(), grants.denied(List.of(PATCH_MACHINE, GET_LISTED_SECRET, UPDATE_STATUS, WATCH_ALL)));
    assertFalse(grants.allows(ApiRequest.of("GET", "/api/v1/namespaces/default/secrets")), "list on Secrets");
    assertFalse(grants.allows(GET_SECRET), "a Secret in a namespace the list does not name");
    assertFalse(grants.allows(ApiRequest.of("GET", "/api/v1/namespaces/kube-system/secrets/x")));
    assertFalse(grants.allows(ApiRequest.of("DELETE", "/apis/cluster.x-k8s.io/v1beta2/namespaces/fleet/machines/m")));
  }

  @Test
  void removingARuleTheCodeUsesFailsNamingTheRequest() {
    List<HasMetadata> objects = new ArrayList<>(Kustomize.render("default"));
    ClusterRole role = Kustomize.one(objects, ClusterRole.class, "inplace-worker-clusters");
    List<PolicyRule> kept = role.getRules().stream()
        .filter(r -> !(r.getApiGroups().contains("cluster.x-k8s.io") && r.getResources().contains("machines")))
        .toList();
    assertEquals(role.getRules().size() - 1, kept.size(), "exactly the Machines rule is removed");
    role.setRules(new ArrayList<>(kept));

    List<String> denied = RbacGrants.of(objects, NS, SA).denied(List.of(PATCH_MACHINE, GET_LISTED_SECRET));

    assertEquals(List.of("patch cluster.x-k8s.io/machines in namespace fleet [PATCH]"), denied);
  }

  @Test
  void aRoleGrantsOnlyInItsBindingsNamespace() {
    RbacGrants grants = RbacGrants.of(Kustomize.render("namespaced"), NS, SA);

    assertTrue(grants.allows(ApiRequest.of("GET", "/api/v1/namespaces/capi-clusters/secrets/edge-1-ssh-key")));
    assertEquals(List.of("get core/secrets in namespace fleet [GET]"), grants.denied(Set.of(GET_SECRET)));
  }

  @Test
  void grantsNothingUsedAreListed() {
    RbacGrants grants = RbacGrants.of(Kustomize.render("default"), NS, SA);

    List<String> unused = grants.unused(List.of(PATCH_MACHINE)).stream().map(Object::toString).toList();

    assertFalse(unused.contains("patch cluster.x-k8s.io/machines (inplace-worker-clusters)"), unused.toString());
    assertTrue(unused.contains("get core/secrets in namespace default (inplace-worker-config)"), unused.toString());
  }
}
