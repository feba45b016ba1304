package dev.inplace.activities.host;

/**
 * The restart step's heartbeat while a Kairos host reboots: the boot ID the reboot started from, so
 * a retried attempt (a worker that crashed while the host was down) waits for the host to come back
 * instead of giving up on a first connection that fails.
 *
 * @param fromBoot the boot ID of the boot plan being carried out
 * @param note what the step is doing, for people reading the heartbeat
 */
public record RebootProgress(String fromBoot, String note) {}
