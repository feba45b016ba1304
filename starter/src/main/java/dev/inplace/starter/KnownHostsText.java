package dev.inplace.starter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * known_hosts text as OpenSSH writes it and the product's connector reads it: one {@code PATTERNS
 * TYPE BASE64} line per key, the host written {@code [address]:port} unless the port is 22.
 */
final class KnownHostsText {
  private KnownHostsText() {}

  /** {@code address}, or {@code [address]:port} when the port is not 22. */
  static String hostPattern(String address, int port) {
    return port == 22 ? address : "[" + address + "]:" + port;
  }

  /**
   * {@code existing} with the scanned hosts' lines replaced by {@code lines}: a line naming one of
   * {@code replaced} loses that name (and the whole line when it named nothing else); comments,
   * hashed names and other hosts (a jump host, say) are kept as they are.
   */
  static String merge(String existing, Set<String> replaced, List<String> lines) {
    List<String> kept = new ArrayList<>();
    for (String line : existing == null ? List.<String>of() : existing.lines().toList()) {
      String trimmed = line.trim();
      if (trimmed.isEmpty() || trimmed.startsWith("#")) {
        kept.add(line);
        continue;
      }
      String[] fields = trimmed.split("\\s+", 2);
      List<String> names = new ArrayList<>(Arrays.asList(fields[0].split(",")));
      if (!names.removeIf(replaced::contains)) {
        kept.add(line);
      } else if (!names.isEmpty() && fields.length == 2) {
        kept.add(String.join(",", names) + " " + fields[1]);
      }
    }
    kept.addAll(lines);
    return kept.isEmpty() ? "" : String.join("\n", kept) + "\n";
  }
}
