package dev.inplace.workflows.api;

/**
 * How an activity reaches one host: the address plus references to the SSH Secrets in {@code
 * secretNamespace}. Contains no secret material.
 */
public record HostAccess(String secretNamespace, String nodeName, String address, SshSettings ssh) {}
