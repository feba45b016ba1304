package dev.inplace.sandbox.hosts;

/**
 * A Kubernetes binary the kubelet simulator saw start on a node (the service's binary: k3s, the
 * kubelet on kubeadm nodes, k0s), with the sha256 of the file it started, computed by the sandbox
 * itself and kept in its memory: the product cannot write this record.
 *
 * @param node the node
 * @param binary the binary's path on the host, e.g. {@code /usr/local/bin/k3s}
 * @param sha256 the file's digest when it started, or {@code absent} when there was no file
 * @param restart the service's restart counter (0: running when the estate started)
 * @param at when the simulator saw the start (ISO-8601 instant; within one poll interval of it)
 */
public record BinaryStart(String node, String binary, String sha256, long restart, String at) {}
