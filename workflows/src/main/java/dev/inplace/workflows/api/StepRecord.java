package dev.inplace.workflows.api;

/** One step as it happened; times are workflow time in epoch milliseconds, 0 while unknown. */
public record StepRecord(
    UpgradeStep step, StepStatus status, long startedMillis, long finishedMillis, String message) {}
