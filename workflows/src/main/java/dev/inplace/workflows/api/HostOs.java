package dev.inplace.workflows.api;

import java.util.Locale;

/**
 * The operating system profile of a cluster's hosts, orthogonal to the {@link Distribution}: on a
 * {@link #STANDARD} host the distribution's binaries are swapped in place; on a {@link #KAIROS} host
 * (immutable, A/B) an OS image carrying kernel and Kubernetes is written with {@code kairos-agent
 * upgrade} and the host reboots into it (docs/kairos.md).
 */
public enum HostOs {
  /** A mutable host: binaries and image archives are swapped in place. */
  STANDARD,
  /** Kairos: the upgrade is an OS image, the previous one stays as the fallback boot entry. */
  KAIROS;

  /** {@code standard} or {@code kairos}, as the CLI, the extension and the docs spell it. */
  public String cliName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The profile named {@code text} (any case); null or blank means {@link #STANDARD}. */
  public static HostOs parse(String text) {
    if (text == null || text.isBlank()) {
      return STANDARD;
    }
    for (HostOs os : values()) {
      if (os.name().equalsIgnoreCase(text.trim())) {
        return os;
      }
    }
    throw new IllegalArgumentException("os must be standard or kairos, got '" + text + "'");
  }

  /** A request recorded before the field existed carries null: a standard host. */
  public static HostOs orStandard(HostOs os) {
    return os == null ? STANDARD : os;
  }
}
