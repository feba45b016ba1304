package dev.inplace.workflows.api;

import java.util.List;

/**
 * The outcome of a node's upgrade that completed. A node that failed ends its workflow with an
 * {@code ApplicationFailure} whose type is from {@code UpgradeFailures} and whose details are a
 * {@link NodeFailure}.
 *
 * @param alreadyAtTarget true when the node already ran the target and nothing was changed
 */
public record NodeUpgradeResult(
    String machineName,
    String nodeName,
    String previousVersion,
    String version,
    boolean alreadyAtTarget,
    List<StepRecord> steps) {}
