package dev.inplace.starter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Fingerprints the operator confirms out of band ({@code ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub}
 * on the host, or the provider's console), given as {@code HOST=SHA256:...} with {@code --expect}
 * or one per line in {@code --expect-file}. HOST is the Machine's name, its Node's name or its
 * address. A host is trusted when every fingerprint given for it is among the keys it shows; those
 * keys, and only those, are pinned.
 */
final class ExpectedFingerprints implements HostKeyTrust {
  private static final Pattern FINGERPRINT = Pattern.compile("SHA256:[A-Za-z0-9+/]{43}");
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9][A-Za-z0-9.:_-]*");

  private final Map<String, Set<String>> byHost;

  private ExpectedFingerprints(Map<String, Set<String>> byHost) {
    this.byHost = byHost;
  }

  /**
   * Parses {@code --expect} values and the lines of {@code file} (may be null): blank lines and
   * {@code #} comments are skipped, {@code HOST=FP} and {@code HOST FP} both read.
   *
   * @throws CliException naming the first entry that is not {@code HOST=SHA256:<43 base64 characters>}
   */
  static ExpectedFingerprints parse(List<String> entries, Path file) {
    Map<String, Set<String>> byHost = new LinkedHashMap<>();
    List<String> all = new ArrayList<>(entries);
    List<String> sources = new ArrayList<>(entries.stream().map(e -> "--expect " + e).toList());
    if (file != null) {
      List<String> lines;
      try {
        lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new CliException("--expect-file " + file + " cannot be read (" + e.getClass().getSimpleName() + ")");
      }
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).trim();
        if (!line.isEmpty() && !line.startsWith("#")) {
          all.add(line);
          sources.add(file + " line " + (i + 1));
        }
      }
    }
    for (int i = 0; i < all.size(); i++) {
      String[] parts = all.get(i).trim().split("\\s*=\\s*|\\s+", 2);
      if (parts.length != 2 || !HOST.matcher(parts[0]).matches() || !FINGERPRINT.matcher(parts[1]).matches()) {
        throw new CliException(sources.get(i) + ": expected HOST=SHA256:<43 base64 characters> (as ssh-keygen -lf"
            + " prints it), with HOST a Machine, Node or address");
      }
      byHost.computeIfAbsent(parts[0], h -> new LinkedHashSet<>()).add(parts[1]);
    }
    if (byHost.isEmpty()) {
      throw new CliException("--expect-file " + file + " gives no fingerprint");
    }
    return new ExpectedFingerprints(byHost);
  }

  /** Names given with a fingerprint that are none of {@code hosts}: most likely a typo. */
  List<String> unmatchedNames(List<ClusterHosts.Host> hosts) {
    return byHost.keySet().stream().filter(name -> hosts.stream().noneMatch(h -> h.isNamed(name))).toList();
  }

  @Override
  public Decision decide(ClusterHosts.Host host, List<HostKey> shown) {
    Set<String> expected = new LinkedHashSet<>();
    byHost.forEach((name, fingerprints) -> {
      if (host.isNamed(name)) {
        expected.addAll(fingerprints);
      }
    });
    if (expected.isEmpty()) {
      return Decision.refuse("no fingerprint given for it (--expect " + host.machine() + "=SHA256:...); it shows "
          + HostKeyTrust.describe(shown));
    }
    List<String> missing = expected.stream()
        .filter(fp -> shown.stream().noneMatch(k -> k.fingerprint().equals(fp))).toList();
    if (!missing.isEmpty()) {
      return Decision.refuse("MISMATCH: expected " + String.join(", ", missing) + " but it shows "
          + HostKeyTrust.describe(shown));
    }
    return Decision.trust(shown.stream().filter(k -> expected.contains(k.fingerprint())).toList());
  }

  @Override
  public String name() {
    return "--expect";
  }
}
