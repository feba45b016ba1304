package dev.inplace.sandbox.hosts;

import dev.inplace.sandbox.faults.FaultInjector;
import dev.inplace.workflows.api.UpgradeStep;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.sshd.server.Environment;
import org.apache.sshd.server.ExitCallback;
import org.apache.sshd.server.channel.ChannelSession;
import org.apache.sshd.server.command.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One SSH exec request on a simulated node: {@code bash -c <command>} in the node root, with {@code
 * INPLACE_HOST_ROOT} set, streams wired to the channel and the exit status sent back.
 *
 * <p>For a script sent on stdin ({@code bash -s}, {@code sudo -n bash -s}) the script is read first
 * so an armed fault can refuse it by its {@code # inplace-step: <step>} marker before anything
 * runs.
 */
final class HostCommand implements Command {
  private static final Logger LOG = LoggerFactory.getLogger(HostCommand.class);

  /** Scripts larger than this are not inspected past this many bytes; the rest is streamed. */
  static final int SCRIPT_INSPECT_LIMIT = 1 << 20;

  private static final Pattern SCRIPT_ON_STDIN =
      Pattern.compile("\\s*(?:sudo\\s+-n\\s+)?(?:/bin/|/usr/bin/)?bash\\s+-s\\s*");
  private static final Pattern STEP_MARKER =
      Pattern.compile("(?m)^# inplace-step: ([A-Za-z0-9_-]+)[ \\t]*\\r?$");

  private final String command;
  private final HostExecContext context;
  private final SshFaults sshFaults;
  private volatile ChannelSession channel;
  private InputStream in;
  private OutputStream out;
  private OutputStream err;
  private ExitCallback exit;
  private volatile Process process;
  private volatile boolean destroyed;

  HostCommand(String command, HostExecContext context, SshFaults sshFaults) {
    this.command = command;
    this.context = context;
    this.sshFaults = sshFaults;
  }

  @Override
  public void setInputStream(InputStream in) {
    this.in = in;
  }

  @Override
  public void setOutputStream(OutputStream out) {
    this.out = out;
  }

  @Override
  public void setErrorStream(OutputStream err) {
    this.err = err;
  }

  @Override
  public void setExitCallback(ExitCallback callback) {
    this.exit = callback;
  }

  @Override
  public void start(ChannelSession channel, Environment env) {
    this.channel = channel;
    Thread runner = new Thread(this::run, "sandbox-exec-" + context.node());
    runner.setDaemon(true);
    runner.start();
  }

  @Override
  public void destroy(ChannelSession channel) {
    // The channel closed (client gone or host dropped): a real sshd would SIGHUP the session.
    destroyed = true;
    Process p = process;
    if (p != null && p.isAlive()) {
      LOG.info("node {}: channel closed, killing the running command", context.node());
      kill(p);
    }
  }

  private void run() {
    MDC.put("node", context.node());
    try {
      byte[] script = null;
      SshFaults.Fault sshFault = SshFaults.Fault.NONE;
      if (SCRIPT_ON_STDIN.matcher(command).matches()) {
        sshFault = sshFaults.nextCommand();
        script = readUpTo(in, SCRIPT_INSPECT_LIMIT);
        Optional<UpgradeStep> faulted = armedScriptFault(script);
        if (faulted.isPresent()) {
          String message =
              "sandbox: injected fault at " + faulted.get().cliName() + " on " + context.node();
          LOG.info("node {}: {}", context.node(), message);
          err.write((message + "\n").getBytes(StandardCharsets.UTF_8));
          err.flush();
          exit.onExit(1, message);
          return;
        }
      }
      Integer code = execute(script, sshFault);
      if (code != null) {
        exit.onExit(code);
      }
    } catch (IOException e) {
      LOG.warn("node {}: command failed to run: {}", context.node(), e.toString());
      writeQuietly(err, "sandbox: cannot run command: " + e.getMessage() + "\n");
      exit.onExit(255, "sandbox: cannot run command");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exit.onExit(255, "interrupted");
    } finally {
      MDC.remove("node");
    }
  }

  /** Runs the command; returns its exit status, or null when an SSH fault took the answer away. */
  private Integer execute(byte[] script, SshFaults.Fault sshFault)
      throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder("bash", "-c", command).directory(context.root().toFile());
    Map<String, String> env = builder.environment();
    // Nothing from the sandbox's own environment leaks into the host: only what a login would set.
    env.clear();
    env.put("PATH", context.sandboxBin() + ":/usr/local/bin:/usr/bin:/bin");
    env.put("INPLACE_HOST_ROOT", context.root().toString());
    env.put("HOME", context.root().toString());
    env.put("USER", context.user());
    env.put("LOGNAME", context.user());
    env.put("LANG", "C.UTF-8");
    Process p = builder.start();
    process = p;
    if (destroyed) {
      kill(p);
    }
    Thread stdout = pump(p.getInputStream(), out, "stdout");
    Thread stderr = pump(p.getErrorStream(), err, "stderr");
    Thread stdin = feed(script, p.getOutputStream());
    if (sshFault != SshFaults.Fault.NONE) {
      bite(sshFault, p);
      return null;
    }
    int code = p.waitFor();
    stdout.join();
    stderr.join();
    stdin.interrupt();
    LOG.debug("node {}: command exited {}", context.node(), code);
    return code;
  }

  private Optional<UpgradeStep> armedScriptFault(byte[] script) {
    Matcher m = STEP_MARKER.matcher(new String(script, StandardCharsets.ISO_8859_1));
    if (!m.find()) {
      return Optional.empty();
    }
    UpgradeStep step;
    try {
      step = UpgradeStep.fromCliName(m.group(1));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (!FaultInjector.SCRIPT_STEPS.contains(step)) {
      return Optional.empty();
    }
    return FaultInjector.armedVersion(context.root(), step).map(v -> step);
  }

  /** Sends the buffered script head and then whatever else the client sends, then closes stdin. */
  private Thread feed(byte[] head, OutputStream processIn) {
    Thread t =
        new Thread(
            () -> {
              try (processIn) {
                if (head != null) {
                  processIn.write(head);
                  processIn.flush();
                }
                // Copy the rest; for a fully buffered script the stream is already at EOF.
                byte[] buffer = new byte[8192];
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  processIn.write(buffer, 0, n);
                  processIn.flush();
                }
              } catch (IOException e) {
                // the process exited or the channel closed: nothing more to deliver
              }
            },
            "sandbox-stdin-" + context.node());
    t.setDaemon(true);
    t.start();
    return t;
  }

  private Thread pump(InputStream from, OutputStream to, String name) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[8192];
              try (from) {
                int n;
                while ((n = from.read(buffer)) >= 0) {
                  to.write(buffer, 0, n);
                  to.flush();
                }
              } catch (IOException e) {
                // channel closed under us: the process is being killed
              }
            },
            "sandbox-" + name + "-" + context.node());
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static byte[] readUpTo(InputStream in, int limit) throws IOException {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    byte[] chunk = new byte[8192];
    while (buffer.size() < limit) {
      int n = in.read(chunk, 0, Math.min(chunk.length, limit - buffer.size()));
      if (n < 0) {
        break;
      }
      buffer.write(chunk, 0, n);
    }
    return buffer.toByteArray();
  }

  /**
   * A drop closes the session after a random delay (destroy then kills a script still running); a
   * hang stops the script (SIGSTOP) after a random delay, or withholds its exit status if it ended,
   * until the client closes the channel.
   */
  private void bite(SshFaults.Fault fault, Process p) throws IOException, InterruptedException {
    boolean ended = p.waitFor(sshFaults.delayMillis(), TimeUnit.MILLISECONDS);
    if (fault == SshFaults.Fault.DROP) {
      sshFaults.countDrop();
      LOG.info("node {}: SSH fault: dropping the connection {}", context.node(), ended ? "before the exit status" : "mid-command");
      channel.getSession().close(true);
      return;
    }
    sshFaults.countHang();
    LOG.info("node {}: SSH fault: the command hangs {}", context.node(), ended ? "after it ended" : "mid-command");
    if (!ended) {
      stop(p);
    }
    while (!destroyed && channel.isOpen()) {
      TimeUnit.MILLISECONDS.sleep(200);
    }
    if (p.isAlive()) {
      kill(p);
    }
  }

  /** SIGSTOP to the script and everything it started: it hangs where it is. */
  private static void stop(Process p) throws IOException, InterruptedException {
    java.util.List<String> kill = new java.util.ArrayList<>(java.util.List.of("kill", "-STOP"));
    p.descendants().forEach(d -> kill.add(Long.toString(d.pid())));
    kill.add(Long.toString(p.pid()));
    new ProcessBuilder(kill).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
  }

  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
  }

  private static void writeQuietly(OutputStream stream, String text) {
    try {
      stream.write(text.getBytes(StandardCharsets.UTF_8));
      stream.flush();
    } catch (IOException e) {
      // the client is gone; the exit status is all that is left to send
    }
  }
}
