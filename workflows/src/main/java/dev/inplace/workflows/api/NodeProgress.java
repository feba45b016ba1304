package dev.inplace.workflows.api;

import java.util.List;

/** What the NodeUpgrade progress query returns. */
public record NodeProgress(
    String machineName,
    String nodeName,
    NodePhase phase,
    UpgradeStep currentStep,
    List<StepRecord> steps,
    String message) {}
