package dev.inplace.sandbox.extension;

/** How one Machine's simulated in-place update ended. */
record UpdateOutcome(String machine, String node, boolean done, boolean started, String message) {}
