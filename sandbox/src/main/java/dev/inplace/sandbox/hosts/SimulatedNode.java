package dev.inplace.sandbox.hosts;

import dev.inplace.workflows.api.NodeRole;
import java.nio.file.Path;

/**
 * A node as the kubelet simulator sees it.
 *
 * @param name the Kubernetes Node name
 * @param root the node's root directory ({@code INPLACE_HOST_ROOT})
 * @param service the k3s service unit ({@code k3s} or {@code k3s-agent})
 * @param role a k3s server (with an embedded etcd member) or an agent
 */
public record SimulatedNode(String name, Path root, String service, NodeRole role) {}
