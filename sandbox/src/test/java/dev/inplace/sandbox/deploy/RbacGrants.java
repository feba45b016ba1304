package dev.inplace.sandbox.deploy;

import dev.inplace.sandbox.kube.ApiRequest;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * What a ServiceAccount may do, from rendered RBAC objects, decided as kube-apiserver's RBAC
 * authorizer does: a ClusterRole bound by a ClusterRoleBinding grants everywhere, a Role (or
 * ClusterRole) bound by a RoleBinding grants in the binding's namespace only. Rules naming objects
 * (resourceNames) never match here, because the recorded requests carry no names.
 */
final class RbacGrants {
  /** One rule and where it applies ({@code namespace} empty: everywhere). */
  record Grant(String role, String namespace, PolicyRule rule) {
    boolean allows(ApiRequest request) {
      if (!namespace.isEmpty() && !namespace.equals(request.namespace())) {
        return false;
      }
      if (rule.getResourceNames() != null && !rule.getResourceNames().isEmpty()) {
        return false;
      }
      return matches(rule.getApiGroups(), request.apiGroup())
          && resourceMatches(rule.getResources(), request)
          && matches(rule.getVerbs(), request.verb());
    }

    private static boolean matches(List<String> allowed, String value) {
      return allowed != null && (allowed.contains("*") || allowed.contains(value));
    }

    private static boolean resourceMatches(List<String> allowed, ApiRequest request) {
      if (allowed == null) {
        return false;
      }
      if (allowed.contains("*") || allowed.contains(request.rbacResource())) {
        return true;
      }
      return !request.subresource().isEmpty() && allowed.contains("*/" + request.subresource());
    }
  }

  /** A (group, resource, verb) a grant allows that no request used. */
  record Unused(String role, String namespace, String apiGroup, String resource, String verb) {
    @Override
    public String toString() {
      return verb + " " + (apiGroup.isEmpty() ? "core" : apiGroup) + "/" + resource
          + (namespace.isEmpty() ? "" : " in namespace " + namespace) + " (" + role + ")";
    }
  }

  private final List<Grant> grants;

  private RbacGrants(List<Grant> grants) {
    this.grants = List.copyOf(grants);
  }

  /** The grants bound to {@code serviceAccount} in {@code namespace} among these objects. */
  static RbacGrants of(Collection<HasMetadata> objects, String namespace, String serviceAccount) {
    List<HasMetadata> all = List.copyOf(objects);
    List<Grant> grants = new ArrayList<>();
    for (ClusterRoleBinding b : Kustomize.all(all, ClusterRoleBinding.class)) {
      if (bindsTo(b.getSubjects(), namespace, serviceAccount)) {
        rules(all, b.getRoleRef().getKind(), b.getRoleRef().getName(), "")
            .forEach(r -> grants.add(new Grant(b.getRoleRef().getName(), "", r)));
      }
    }
    for (RoleBinding b : Kustomize.all(all, RoleBinding.class)) {
      if (bindsTo(b.getSubjects(), namespace, serviceAccount)) {
        String ns = b.getMetadata().getNamespace();
        rules(all, b.getRoleRef().getKind(), b.getRoleRef().getName(), ns)
            .forEach(r -> grants.add(new Grant(b.getRoleRef().getName(), ns, r)));
      }
    }
    return new RbacGrants(grants);
  }

  private static boolean bindsTo(List<Subject> subjects, String namespace, String serviceAccount) {
    return subjects != null && subjects.stream().anyMatch(s -> "ServiceAccount".equals(s.getKind())
        && serviceAccount.equals(s.getName()) && namespace.equals(s.getNamespace()));
  }

  private static List<PolicyRule> rules(List<HasMetadata> all, String kind, String name, String namespace) {
    Optional<List<PolicyRule>> rules = "ClusterRole".equals(kind)
        ? Kustomize.named(all, ClusterRole.class, name).map(ClusterRole::getRules)
        : Kustomize.all(all, Role.class).stream()
            .filter(r -> name.equals(r.getMetadata().getName()) && namespace.equals(r.getMetadata().getNamespace()))
            .findFirst().map(Role::getRules);
    // A binding to a missing role grants nothing, as on a real cluster.
    return rules.orElse(List.of());
  }

  List<Grant> grants() {
    return grants;
  }

  boolean allows(ApiRequest request) {
    return !request.isResourceRequest() || grants.stream().anyMatch(g -> g.allows(request));
  }

  /** The resource requests no grant allows, each named, sorted. */
  List<String> denied(Collection<ApiRequest> requests) {
    return requests.stream().filter(r -> !allows(r)).map(ApiRequest::toString).sorted().distinct().toList();
  }

  /** Every (group, resource, verb) granted that none of these requests used. */
  List<Unused> unused(Collection<ApiRequest> requests) {
    TreeSet<String> seen = new TreeSet<>();
    List<Unused> unused = new ArrayList<>();
    for (Grant g : grants) {
      for (String group : g.rule().getApiGroups()) {
        for (String resource : g.rule().getResources()) {
          for (String verb : g.rule().getVerbs()) {
            PolicyRule single = new PolicyRuleBuilder().withApiGroups(group).withResources(resource).withVerbs(verb).build();
            Grant one = new Grant(g.role(), g.namespace(), single);
            boolean used = requests.stream().anyMatch(one::allows);
            Unused u = new Unused(g.role(), g.namespace(), group, resource, verb);
            if (!used && seen.add(u.toString())) {
              unused.add(u);
            }
          }
        }
      }
    }
    return unused;
  }
}
