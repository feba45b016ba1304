package dev.inplace.sandbox.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.stack.StackLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A failed bench keeps the stack's logs (its failure message names them) and drops the rest. */
class E2eBenchmarkKeepLogsTest {
  @TempDir Path dir;

  @Test
  void keepsTheLogsAndDeletesTheEstateAndEverythingElse() throws Exception {
    StackLayout layout = new StackLayout(dir);
    Files.createDirectories(layout.logs());
    Files.writeString(layout.log(StackLayout.ESTATE), "estate: hosts 40/101 provisioned (20.0 s)\n");
    Path nodeRoot = Files.createDirectories(layout.estateDir().resolve("hosts/worker-0/usr/local/bin"));
    Files.writeString(nodeRoot.resolve("k3s"), "binary");
    Files.writeString(layout.estateDescription(), "{}");

    E2eBenchmark.keepOnly(dir, layout.logs());

    assertEquals("estate: hosts 40/101 provisioned (20.0 s)\n", Files.readString(layout.log(StackLayout.ESTATE)));
    assertFalse(Files.exists(layout.estateDir()));
    assertFalse(Files.exists(layout.estateDescription()));
    try (var left = Files.list(dir)) {
      assertEquals(1, left.count());
    }
    assertTrue(Files.isDirectory(layout.logs()));
  }
}
