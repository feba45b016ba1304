package dev.inplace.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SandboxSlotTest {
  @Test
  void withoutThePropertyTheDocumentedLayoutIsUsed() {
    assertEquals(1, SandboxSlot.parse(null));
  }

  @Test
  void theSecondSlotIsAcceptedAndAnythingElseIncludingAnUnreplacedOrEmptyValueIsRefused() {
    assertEquals(2, SandboxSlot.parse("2"));
    for (String bad : new String[] {"", "0", "3", "two", "${surefire.forkNumber}"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SandboxSlot.parse(bad));
      assertEquals("inplace.sandbox.slot must be 1 or 2, got '" + bad + "'", e.getMessage());
    }
  }
}
