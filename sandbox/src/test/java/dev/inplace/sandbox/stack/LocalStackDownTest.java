package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code down} stops the processes its PID files name only while they still carry the stack's markers. */
class LocalStackDownTest {
  @TempDir Path dir;
  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    started.forEach(Process::destroyForcibly);
  }

  /**
   * A long sleep whose command line carries {@code extra} arguments (bash ignores them). The second
   * command keeps bash itself waiting: given a lone {@code sleep 60}, bash execs it and its command
   * line loses the markers, so whether {@code down} saw them raced that exec.
   */
  private Process sleeper(List<String> extra) throws Exception {
    List<String> command = new ArrayList<>(List.of("bash", "-c", "sleep 60; exit 0"));
    command.addAll(extra);
    Process process = new ProcessBuilder(command).start();
    started.add(process);
    return process;
  }

  private void pidFile(StackLayout layout, String role, Process process) throws Exception {
    Files.createDirectories(layout.pids());
    Files.writeString(layout.pidFile(role), process.pid() + "\n");
  }

  @Test
  void aProcessCarryingTheStacksMarkersIsStopped() throws Exception {
    StackLayout layout = new StackLayout(dir);
    Process worker = sleeper(StackCommands.markers(layout, "worker-1"));
    pidFile(layout, "worker-1", worker);

    List<String> stopped = LocalStack.down(layout);

    assertTrue(worker.waitFor(10, TimeUnit.SECONDS), "the marked process was stopped");
    assertEquals(1, stopped.size());
    assertFalse(Files.exists(layout.pidFile("worker-1")));
  }

  @Test
  void theDevServerIsKnownByItsDatabaseInTheStackDirectoryAndAnotherStacksIsLeftAlone() throws Exception {
    StackLayout layout = new StackLayout(dir.resolve("this"));
    Process ours = sleeper(StackCommands.devServerMarkers(layout));
    Process theirs = sleeper(StackCommands.devServerMarkers(new StackLayout(dir.resolve("other"))));
    pidFile(layout, StackLayout.TEMPORAL, ours);
    StackLayout other = new StackLayout(dir.resolve("elsewhere"));
    pidFile(other, StackLayout.TEMPORAL, theirs);

    List<String> stopped = LocalStack.down(layout);
    List<String> stoppedElsewhere = LocalStack.down(other);

    assertTrue(ours.waitFor(10, TimeUnit.SECONDS), "this stack's dev server was stopped");
    assertEquals(1, stopped.size(), stopped.toString());
    assertTrue(stoppedElsewhere.isEmpty(), "a dev server on another stack's database: " + stoppedElsewhere);
    assertTrue(theirs.isAlive(), "another stack's dev server is not this stack's");
  }

  @Test
  void aReusedPidWithoutTheMarkersIsLeftAlone() throws Exception {
    StackLayout layout = new StackLayout(dir);
    Process stranger = sleeper(List.of());
    Process otherStack = sleeper(StackCommands.markers(new StackLayout(dir.resolve("other")), "worker-1"));
    pidFile(layout, "worker-1", stranger);
    pidFile(layout, "worker-2", otherStack);

    List<String> stopped = LocalStack.down(layout);

    assertTrue(stopped.isEmpty(), stopped.toString());
    assertTrue(stranger.isAlive(), "a process that is not the stack's is never killed");
    assertTrue(otherStack.isAlive(), "another stack's process is not this stack's");
    assertFalse(Files.exists(layout.pidFile("worker-1")), "the stale PID file is removed");
  }
}
