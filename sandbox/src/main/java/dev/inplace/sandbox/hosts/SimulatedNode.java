package dev.inplace.sandbox.hosts;

import java.nio.file.Path;

/**
 * A node as the kubelet simulator sees it.
 *
 * @param name the Kubernetes Node name
 * @param root the node's root directory ({@code INPLACE_HOST_ROOT})
 * @param service the k3s service unit ({@code k3s} or {@code k3s-agent})
 */
public record SimulatedNode(String name, Path root, String service) {}
