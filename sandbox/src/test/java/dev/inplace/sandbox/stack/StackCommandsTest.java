package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stack's JVMs run with C1 only, but an estate that is its nodes' SSH server (MINA hosts) keeps
 * C2 for its ciphers, and a benchmarked worker runs as the image runs it.
 */
class StackCommandsTest {
  private static final String C1_ONLY = "-XX:TieredStopAtLevel=1";

  @TempDir Path dir;

  @Test
  void anEstateWithMinaHostsRunsWithC2AndTheWorkersAndTemporalWithC1Only() {
    StackLayout layout = new StackLayout(dir);
    List<String> estate = StackCommands.estate(layout, List.of("--workers", "3"), List.of());
    List<String> worker = StackCommands.worker(layout, StackLayout.worker(1), List.of());
    List<String> temporal = StackCommands.temporal(layout, List.of());

    assertFalse(estate.contains(C1_ONLY), estate.toString());
    assertTrue(estate.contains(EstateMain.class.getName()), estate.toString());
    assertTrue(worker.contains(C1_ONLY), worker.toString());
    assertTrue(temporal.contains(C1_ONLY), temporal.toString());
  }

  @Test
  void theDevServerListensOnLoopbackOnTheStacksPortsAndKeepsItsDatabaseInTheStackDirectory() {
    StackLayout layout = new StackLayout(dir);
    List<String> command = StackCommands.temporalDevServer(layout, Path.of("/opt/temporal"), 7233, 8233);

    assertEquals(List.of("/opt/temporal", "server", "start-dev"), command.subList(0, 3));
    assertEquals("127.0.0.1", after(command, "--ip"));
    assertEquals("7233", after(command, "--port"));
    assertEquals("8233", after(command, "--ui-port"));
    assertEquals(dir.resolve("temporal.db").toString(), after(command, "--db-filename"));
    assertEquals("default", after(command, "--namespace"));
    assertTrue(command.containsAll(StackCommands.devServerMarkers(layout)), "marked as the stack's: " + command);
  }

  private static String after(List<String> command, String flag) {
    int at = command.indexOf(flag);
    assertTrue(at >= 0 && at + 1 < command.size(), flag + " in " + command);
    return command.get(at + 1);
  }

  @Test
  void anEstateWithOpenSshHostsRunsWithC1Only() {
    StackLayout layout = new StackLayout(dir);
    List<String> openssh = StackCommands.estate(layout, List.of("--workers", "3", "--hosts", "openssh"), List.of());
    List<String> mina = StackCommands.estate(layout, List.of("--hosts", "mina", "--workers", "3"), List.of());

    assertTrue(openssh.contains(C1_ONLY), "sshd ciphers and openssl hashes: " + openssh);
    assertFalse(mina.contains(C1_ONLY), "the estate is the SSH server: " + mina);
    assertFalse(StackCommands.opensshHosts(List.of("--hosts")), "no value: the default, MINA");
  }

  @Test
  void aBenchmarkedWorkerRunsWithTheJvmsOwnCompilersAndCollectorAsTheImageDoes() {
    List<String> command = StackCommands.workerAsShipped(new StackLayout(dir), StackLayout.worker(1), List.of());

    assertFalse(command.contains(C1_ONLY), command.toString());
    assertFalse(command.contains("-XX:+UseSerialGC"), command.toString());
    assertTrue(command.contains(StackCommands.WORKER_MAIN), command.toString());
    assertTrue(command.contains("-Dinplace.stack.role=" + StackLayout.worker(1)), "marked as the stack's");
  }

  @Test
  void aBenchmarkedWorkerGetsTheImagesJvmOptionsInTheFilesOrderAndATestedWorkerDoesNot() throws Exception {
    List<String> fromCheckout = Files.readAllLines(Path.of("../deploy/image/java.options")).stream()
        .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    List<String> shipped = StackCommands.workerAsShipped(new StackLayout(dir), StackLayout.worker(1), List.of());
    List<String> tested = StackCommands.worker(new StackLayout(dir), StackLayout.worker(1), List.of());

    assertFalse(fromCheckout.isEmpty());
    assertEquals(fromCheckout, StackCommands.imageJavaOptions());
    int first = shipped.indexOf(fromCheckout.get(0));
    assertTrue(first > 0 && first < shipped.indexOf(StackCommands.WORKER_MAIN), shipped.toString());
    assertEquals(fromCheckout, shipped.subList(first, first + fromCheckout.size()));
    assertFalse(tested.contains(fromCheckout.get(0)), tested.toString());
  }
}
