package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A start-up failure shows the end of the process's log, and says so when the log is empty. */
class LocalStackLogTailTest {
  @Test
  void anEmptyLogIsNamedAsEmptyNotPrintedAsNothing() {
    assertEquals("(empty: the process wrote nothing yet)", LocalStack.tailOf(""));
    assertEquals("(empty: the process wrote nothing yet)", LocalStack.tailOf("\n"));
  }

  @Test
  void aLongLogShowsItsLast3000Characters() {
    String log = "a".repeat(5000) + "estate: hosts 40/101 provisioned (20.0 s)\n";
    String tail = LocalStack.tailOf(log);
    assertEquals(3000, tail.length());
    assertEquals(log.substring(log.length() - 3000), tail);
  }

  @Test
  void aShortLogIsShownWhole() {
    assertEquals("estate: releases written (1.0 s)\n", LocalStack.tailOf("estate: releases written (1.0 s)\n"));
  }
}
