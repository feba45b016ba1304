package dev.inplace.workflows.api;

/**
 * One node in a parent run's progress. {@code step} is the step it failed at (or null); the step of
 * a node in flight is in its NodeUpgrade's own progress query (workflow ID in {@code workflowId}).
 */
public record NodeStatus(
    String machine,
    String node,
    NodeRole role,
    NodePhase phase,
    UpgradeStep step,
    long startedMillis,
    long finishedMillis,
    String reason,
    String message,
    String workflowId) {}
