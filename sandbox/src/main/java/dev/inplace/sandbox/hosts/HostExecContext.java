package dev.inplace.sandbox.hosts;

import java.nio.file.Path;

/** What an exec on a simulated node needs to know about its node. */
record HostExecContext(String node, Path root, Path sandboxBin, String user) {}
