package dev.inplace.sandbox;

import java.util.List;

/**
 * Which copy of the sandbox's fixed loopback resources this JVM uses, so that two test JVMs can run
 * stacks and estates side by side (the sandbox's integration tests run in two forks). Slot 1, the
 * default and what {@code ./inplace up} and the demo use, is the documented layout: Temporal on 7233,
 * the estate's API servers on 17443/17444, nodes from 127.0.0.10. Slot {@code n} moves every port up
 * by {@code 100 x (n-1)} and the first node's address up by {@code 110 x (n-1)}, clear of the host
 * tests' own addresses (127.0.0.60-100). Set with {@code -Dinplace.sandbox.slot=n}; the stack passes
 * it on to the processes it starts.
 */
public final class SandboxSlot {
  public static final String PROPERTY = "inplace.sandbox.slot";
  /** This JVM's slot, 1 or 2. */
  public static final int SLOT = parse(System.getProperty(PROPERTY));

  private SandboxSlot() {}

  /** What to add to each fixed port of the stack. */
  public static int portOffset() {
    return 100 * (SLOT - 1);
  }

  /** What to add to the last octet of the first node's address. */
  public static int hostOctetOffset() {
    return 110 * (SLOT - 1);
  }

  /** The system property for a process the stack starts: it uses the same slot. */
  public static List<String> jvmArguments() {
    return SLOT == 1 ? List.of() : List.of("-D" + PROPERTY + "=" + SLOT);
  }

  static int parse(String value) {
    if (value == null) {
      return 1;
    }
    try {
      int slot = Integer.parseInt(value.trim());
      if (slot == 1 || slot == 2) {
        return slot;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(PROPERTY + " must be 1 or 2, got '" + value + "'");
  }
}
