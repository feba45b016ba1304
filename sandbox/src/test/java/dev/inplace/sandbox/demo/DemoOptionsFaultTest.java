package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DemoOptionsFaultTest {

  @Test
  void aFaultOnANodeTheEstateDoesNotHaveNamesTheNodesItHas() {
    String message = assertThrows(IllegalArgumentException.class,
        () -> DemoOptions.parse("--fail", "worker-1:restart")).getMessage();
    assertTrue(message.contains("--fail: no node 'worker-1' in this estate"), message);
    assertTrue(message.contains("worker-a-0") && message.contains("worker-b-2"), message);
  }

  @Test
  void faultsOnTheEstatesNodesAreAccepted() {
    assertEquals("worker-b-1", DemoOptions.parse("--fail", "worker-b-1:verify").faults().get(0).node());
    assertEquals("worker-1", DemoOptions.parse("--pools", "1", "--fail", "worker-1:restart").faults().get(0).node());
    assertEquals("cp-0", DemoOptions.parse("--control-planes", "1", "--workers", "0", "--fail", "cp-0:verify")
        .faults().get(0).node());
  }
}
