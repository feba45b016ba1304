package dev.inplace.activities.ssh;

import java.util.regex.Pattern;

/**
 * Blanks what looks like a credential in a host's error output before it becomes part of a failure
 * message (which lands in the run's history): a service's command line in {@code systemctl status}
 * can carry {@code --token ...} (k3s installed with {@code INSTALL_K3S_EXEC="... --token ..."}) or an
 * environment assignment such as {@code K3S_TOKEN=...}. Only the value goes; the flag stays, so the
 * message still says what was there.
 */
final class CredentialRedaction {
  static final String REDACTED = "<redacted>";

  /** {@code --token X}, {@code --agent-token=X}, {@code --password X}, {@code --certificate-key X}, ... */
  private static final Pattern FLAG = Pattern.compile(
      "(--[A-Za-z0-9-]*(?:token|password|passwd|secret|certificate-key)[A-Za-z0-9-]*)(=|\\s+)(?!<redacted>)\\S+",
      Pattern.CASE_INSENSITIVE);
  /** {@code K3S_TOKEN=X}, {@code DB_PASSWORD=X}, {@code CLIENT_SECRET=X}. */
  private static final Pattern ASSIGNMENT = Pattern.compile(
      "\\b([A-Za-z0-9_]*(?:TOKEN|PASSWORD|PASSWD|SECRET)[A-Za-z0-9_]*=)(?!<redacted>)\\S+", Pattern.CASE_INSENSITIVE);

  /** {@code postgres://user:password@host}: a datastore endpoint with its password (k3s HA). */
  private static final Pattern URL_USER_INFO = Pattern.compile("://[^\\s/@:]+:[^\\s@/]+@");

  private CredentialRedaction() {}

  static String redact(String text) {
    String urls = URL_USER_INFO.matcher(text).replaceAll("://" + REDACTED + "@");
    String flags = FLAG.matcher(urls).replaceAll("$1$2" + REDACTED);
    return ASSIGNMENT.matcher(flags).replaceAll("$1" + REDACTED);
  }
}
