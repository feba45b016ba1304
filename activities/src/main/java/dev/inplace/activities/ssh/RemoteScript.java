package dev.inplace.activities.ssh;

/**
 * A rendered shell script, ready to be fed to {@code bash -s} on a host.
 *
 * @param name template name, e.g. {@code stage-commit}
 * @param step the upgrade step the script belongs to (its {@code # inplace-step:} marker)
 * @param text the script itself
 */
public record RemoteScript(String name, String step, String text) {}
