package dev.inplace.sandbox.kube;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A request to the API server as RBAC sees it: the HTTP method, the verb it maps to, and the API
 * group, resource, subresource and namespace it addresses (object names are left out: inplace's RBAC
 * names no objects). Paths outside {@code /api} and {@code /apis/G/V/...} (discovery, {@code /readyz})
 * are non-resource requests, granted to every authenticated user by the default discovery roles.
 *
 * @param namespace empty for cluster-scoped and all-namespaces requests
 */
public record ApiRequest(
    String method, String verb, String apiGroup, String resource, String subresource, String namespace, String path) {

  /** Parses a request line's method and path the way kube-apiserver's RequestInfoResolver does. */
  public static ApiRequest of(String method, String fullPath) {
    int q = fullPath.indexOf('?');
    String path = q < 0 ? fullPath : fullPath.substring(0, q);
    boolean watchParam = q >= 0 && Arrays.stream(fullPath.substring(q + 1).split("&"))
        .map(p -> URLDecoder.decode(p, StandardCharsets.UTF_8))
        .anyMatch(p -> p.equals("watch=true") || p.equals("watch=1"));
    String[] all = Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toArray(String[]::new);
    String group;
    int rest;
    if (all.length >= 2 && all[0].equals("api")) {
      group = "";
      rest = 2;
    } else if (all.length >= 3 && all[0].equals("apis")) {
      group = all[1];
      rest = 3;
    } else {
      return new ApiRequest(method, method.toLowerCase(), "", "", "", "", path); // non-resource
    }
    String[] parts = Arrays.copyOfRange(all, rest, all.length);
    boolean watchPrefix = parts.length > 0 && parts[0].equals("watch");
    if (watchPrefix) {
      parts = Arrays.copyOfRange(parts, 1, parts.length);
    }
    if (parts.length == 0) {
      return new ApiRequest(method, method.toLowerCase(), "", "", "", "", path); // group/version discovery
    }
    String namespace = "";
    if (parts[0].equals("namespaces") && parts.length >= 3) {
      namespace = parts[1];
      parts = Arrays.copyOfRange(parts, 2, parts.length);
    } else if (parts[0].equals("namespaces") && parts.length == 2) {
      namespace = parts[1]; // the Namespace object itself
    }
    String resource = parts[0];
    boolean named = parts.length >= 2;
    String subresource = parts.length >= 3 ? parts[2] : "";
    String verb = switch (method.toUpperCase()) {
      case "GET", "HEAD" -> watchParam || watchPrefix ? "watch" : named ? "get" : "list";
      case "POST" -> "create";
      case "PUT" -> "update";
      case "PATCH" -> "patch";
      case "DELETE" -> named ? "delete" : "deletecollection";
      default -> method.toLowerCase();
    };
    return new ApiRequest(method.toUpperCase(), verb, group, resource, subresource, namespace, path);
  }

  public boolean isResourceRequest() {
    return !resource.isEmpty();
  }

  /** {@code resource} or {@code resource/subresource}, as RBAC rules name it. */
  public String rbacResource() {
    return subresource.isEmpty() ? resource : resource + "/" + subresource;
  }

  /** Without the path: what RBAC decides on (one per distinct decision). */
  public ApiRequest withoutPath() {
    return new ApiRequest(method, verb, apiGroup, resource, subresource, namespace, "");
  }

  @Override
  public String toString() {
    if (!isResourceRequest()) {
      return method + " " + path + " (non-resource)";
    }
    return verb + " " + (apiGroup.isEmpty() ? "core" : apiGroup) + "/" + rbacResource()
        + (namespace.isEmpty() ? " (cluster-wide)" : " in namespace " + namespace) + " [" + method + "]";
  }
}
