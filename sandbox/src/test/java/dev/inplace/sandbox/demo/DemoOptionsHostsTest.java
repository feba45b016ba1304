package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.hosts.HostServer;
import org.junit.jupiter.api.Test;

class DemoOptionsHostsTest {

  @Test
  void hostsDefaultToMinaAndOpensshReachesTheEstate() {
    assertEquals(HostServer.MINA, DemoOptions.parse().hosts());
    assertEquals(HostServer.MINA, DemoOptions.parse().estateSpec().hosts());
    DemoOptions openssh = DemoOptions.parse("--hosts", "openssh");
    assertEquals(HostServer.OPENSSH, openssh.hosts());
    assertEquals(HostServer.OPENSSH, openssh.estateSpec().hosts());
  }

  @Test
  void anUnknownHostServerIsRefusedByName() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> DemoOptions.parse("--hosts", "dropbear"));
    assertTrue(e.getMessage().contains("--hosts must be mina or openssh"), e.getMessage());
  }
}
