package dev.inplace.activities.ssh;

import dev.inplace.workflows.failure.CredentialRedactor;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.connection.ConnectionException;
import net.schmizz.sshj.connection.channel.direct.Session;

/**
 * Runs a rendered script on a host: {@code bash -s} (under {@code sudo -n} for non-root users) with
 * the script on stdin, so nothing of it appears in the process list or needs a temp file. A first
 * line sets the journal's context ({@link JournalContext}: workflow, run, attempt).
 */
final class RemoteShell {
  static final int OUTPUT_LIMIT = 64 * 1024;
  private static final int STDERR_LINES_IN_MESSAGE = 8;

  /** Opens the session a script runs in (on a reused connection, reconnecting if it died). */
  interface Sessions {
    Session start() throws IOException;
  }

  private final Sessions sessions;
  private final String hostLabel;
  private final boolean sudo;
  private final ScriptDeadline deadline;
  private final Duration silenceLimit;

  RemoteShell(Sessions sessions, String hostLabel, boolean sudo, ScriptDeadline deadline, Duration silenceLimit) {
    this.sessions = sessions;
    this.hostLabel = hostLabel;
    this.sudo = sudo;
    this.deadline = deadline;
    this.silenceLimit = silenceLimit;
  }

  /**
   * Runs {@code script} and returns its output.
   *
   * @param failureType the failure type of a non-zero exit or a timeout
   */
  ScriptOutput run(RemoteScript script, String failureType) {
    return run(script, failureType, null);
  }

  /**
   * As {@link #run(RemoteScript, String)}, the script bounded by {@code cap} when that is shorter than
   * what is left of the step's budget ({@code null}: no cap).
   */
  ScriptOutput run(RemoteScript script, String failureType, Duration cap) {
    OutputCapture stdout = new OutputCapture(OUTPUT_LIMIT, false);
    OutputCapture stderr = new OutputCapture(OUTPUT_LIMIT, true);
    Integer exit;
    Duration timeout = deadline.remaining();
    if (cap != null && cap.compareTo(timeout) < 0) {
      timeout = cap;
    }
    try (Session session = sessions.start()) {
      Session.Command command = session.exec(sudo ? "sudo -n bash -s" : "bash -s");
      Thread out = pump(command.getInputStream(), stdout, script.name() + "-stdout");
      Thread err = pump(command.getErrorStream(), stderr, script.name() + "-stderr");
      try (OutputStream stdin = command.getOutputStream()) {
        // The journal's context goes first, on its own line; the script text is sent unchanged.
        stdin.write(JournalContext.current().preamble().getBytes(StandardCharsets.UTF_8));
        stdin.write(script.text().getBytes(StandardCharsets.UTF_8));
        stdin.flush();
      } // closing stdin sends EOF: bash then runs to the end of the script
      awaitEnd(command, script, timeout, System.nanoTime(), stdout, stderr);
      out.join(timeout.toMillis());
      err.join(timeout.toMillis());
      exit = command.getExitStatus();
      if (exit == null) {
        String signal = command.getExitSignal() == null ? "none" : command.getExitSignal().name();
        throw failure(
            failureType, script, "ended without an exit status (signal " + signal + ")", stderr);
      }
    } catch (IOException e) {
      throw SshFailures.unreachable(hostLabel, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw UpgradeFailures.retryable(
          UpgradeFailures.HOST_UNREACHABLE,
          "interrupted while running " + script.name() + " on " + hostLabel);
    }
    if (exit != 0) {
      throw failure(failureType, script, "failed with exit code " + exit, stderr);
    }
    return new ScriptOutput(exit, stdout.text(), stderr.text());
  }

  /**
   * Waits for the script to end, within {@code timeout}, and while it shows signs of life: every
   * script pulses on stderr (scripts/lib/pulse.sh), so one silent for {@link #silenceLimit} is
   * stopped, or its host or connection is gone, and is cut at once rather than at the end of the
   * step's budget; a slow one that still pulses (a long {@code kubeadm upgrade apply}) runs on.
   * Either way the outcome is unknown, so the step is retried as Temporal's own timeout would be
   * (the steps are idempotent), never failed for good with the step's type (both found by the chaos
   * campaign). Closing the session afterwards hangs the script up on the host.
   */
  private void awaitEnd(
      Session.Command command,
      RemoteScript script,
      Duration timeout,
      long sentAt,
      OutputCapture stdout,
      OutputCapture stderr)
      throws ConnectionException {
    long end = sentAt + timeout.toNanos();
    while (true) {
      long now = System.nanoTime();
      long lastHeard = Math.max(sentAt, Math.max(stdout.lastHeardNanos(), stderr.lastHeardNanos()));
      long silentFor = now - lastHeard;
      if (now - end >= 0) {
        throw failure(
            UpgradeFailures.STEP_TIMED_OUT,
            script,
            "did not finish within " + ((timeout.toMillis() + 999) / 1000) + "s",
            stderr);
      }
      if (silentFor >= silenceLimit.toNanos()) {
        throw failure(
            UpgradeFailures.STEP_TIMED_OUT,
            script,
            "fell silent for " + TimeUnit.NANOSECONDS.toSeconds(silentFor)
                + "s (no output, no pulse: the script is stopped, or the host or connection is gone)",
            stderr);
      }
      long wait = Math.min(end - now, silenceLimit.toNanos() - silentFor);
      try {
        command.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)), TimeUnit.MILLISECONDS);
        return;
      } catch (ConnectionException e) {
        if (!command.isOpen()) {
          throw e;
        }
        // not ended yet: check the deadline and the silence again
      }
    }
  }

  private ApplicationFailure failure(
      String type, RemoteScript script, String what, OutputCapture stderr) {
    String message =
        script.step()
            + " step '"
            + script.name()
            + "' on "
            + hostLabel
            + " "
            + what
            + lastLines(stderr.text());
    return UpgradeFailures.isRetryable(type)
        ? UpgradeFailures.retryable(type, message)
        : UpgradeFailures.nonRetryable(type, message);
  }

  private static String lastLines(String text) {
    List<String> lines = Arrays.stream(text.split("\n")).filter(l -> !l.isBlank()).toList();
    if (lines.isEmpty()) {
      return "";
    }
    List<String> tail =
        lines.subList(Math.max(0, lines.size() - STDERR_LINES_IN_MESSAGE), lines.size());
    return ": " + CredentialRedactor.redact(String.join(" | ", tail));
  }

  private static Thread pump(InputStream in, OutputCapture capture, String name) {
    Thread thread =
        new Thread(
            () -> {
              try {
                capture.drain(in);
              } catch (IOException e) {
                // The channel closed under us; the exit status (or its absence) tells the story.
              }
            },
            "ssh-" + name);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }
}
