package dev.inplace.starter;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A named source that confirms scanned host keys: only keys it confirms are pinned. Implemented by
 * {@link ExpectedFingerprints} (fingerprints the operator gives) and {@link NodePublishedKeys}
 * (keys each node published on its own Node object); the operator's answer at a terminal is the
 * third way ({@link HostsCommand}).
 */
interface HostKeyTrust {
  /** What this source makes of {@code shown}, the keys {@code host} showed. */
  Decision decide(ClusterHosts.Host host, List<HostKey> shown);

  /** The source's name, as the command's output gives it. */
  String name();

  /** The keys to pin, or why none may be (then {@code trusted} is empty). */
  record Decision(List<HostKey> trusted, String refusal) {
    static Decision trust(List<HostKey> keys) {
      return new Decision(List.copyOf(keys), null);
    }

    static Decision refuse(String why) {
      return new Decision(List.of(), why);
    }

    boolean refused() {
      return refusal != null;
    }
  }

  /** {@code TYPE SHA256:..., ...}: what a host showed, for a refusal. */
  static String describe(List<HostKey> keys) {
    return keys.stream().map(k -> k.type() + " " + k.fingerprint()).collect(Collectors.joining(", "));
  }
}
