package dev.inplace.activities.host;

import dev.inplace.activities.ssh.HostConnection;
import dev.inplace.activities.ssh.ScriptDeadline;
import dev.inplace.activities.ssh.ScriptOutput;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The restart step of a Kairos host with a boot plan: reboot once, wait for the host to answer SSH
 * again with its pinned key (the session drops meanwhile), and check what it booted. Observes before
 * it acts: the boot ID the plan was made in tells a host still to reboot from one that already did,
 * so a retried step or a worker that crashed mid-reboot never reboots the host twice.
 */
final class KairosReboot {
  private static final Logger log = LoggerFactory.getLogger(KairosReboot.class);
  private static final Pattern BOOT_ID = Pattern.compile("[A-Za-z0-9-]{1,64}");

  /** Pause between two attempts to reach a host that is down (or still going down). */
  static final Duration POLL = Duration.ofSeconds(1);

  private final SshConnector ssh;
  private final Sleeper sleeper;

  /** How the wait pauses (tests pass a recording sleeper). */
  interface Sleeper {
    void sleep(Duration d) throws InterruptedException;
  }

  KairosReboot(SshConnector ssh) {
    this(ssh, d -> Thread.sleep(d.toMillis()));
  }

  KairosReboot(SshConnector ssh, Sleeper sleeper) {
    this.ssh = ssh;
    this.sleeper = sleeper;
  }

  /** Whether the restart script reported a boot plan waiting for a reboot. */
  static boolean pending(ScriptOutput restart) {
    return "true".equals(restart.value("reboot_pending"));
  }

  /**
   * Reboots {@code host} for the plan the restart script reported (unless the boot ID shows it has
   * rebooted already), then waits until {@code budget} for it to come back and checks it.
   *
   * @param progress called with a line for each wait, for the activity's heartbeat
   * @throws ApplicationFailure {@code OsImageDidNotBoot} when it came up in another boot entry,
   *     {@code HostDidNotReturn} when it did not answer in time, {@code HostKeyMismatch} when it
   *     answered with another host key
   */
  ServiceResult reboot(
      HostAccess host, HostScripts scripts, String service, ScriptOutput restart, ScriptDeadline budget,
      Consumer<RebootProgress> progress) {
    String from = restart.value("reboot_from_boot");
    String now = restart.value("boot_id");
    String entry = restart.value("reboot_entry");
    if (from == null || !BOOT_ID.matcher(from).matches() || now == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.SERVICE_RESTART_FAILED,
          "the boot plan on " + host.nodeName() + " names no valid boot ID: '" + from + "'");
    }
    if (now.equals(from)) {
      // Recorded before the reboot: an attempt that follows a crash from here on waits for the host.
      progress.accept(new RebootProgress(from, "rebooting " + host.nodeName() + " into " + entry));
      requestReboot(host, scripts, from, budget);
    } else {
      log.info("restart: {} already rebooted (boot {} -> {}); not rebooting again", host.nodeName(), from, now);
    }
    return awaitReturn(host, scripts, service, from, budget, progress);
  }

  /**
   * Waits until {@code budget} for {@code host} to answer again after a reboot from boot {@code
   * from}, then checks it; also what a retried attempt does when an earlier one heartbeated that
   * reboot (the host may still be down: a first failing connection is no reason to give up).
   */
  ServiceResult awaitReturn(
      HostAccess host, HostScripts scripts, String service, String from, ScriptDeadline budget,
      Consumer<RebootProgress> progress) {
    if (from == null || !BOOT_ID.matcher(from).matches()) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.SERVICE_RESTART_FAILED,
          "no valid boot ID to wait for a reboot from: '" + from + "'");
    }
    int attempts = 0;
    String lastProblem = "not tried yet";
    while (budget.remaining().compareTo(POLL) > 0) {
      attempts++;
      try (HostConnection conn = ssh.open(host, budget)) {
        ScriptOutput out = conn.run(scripts.afterReboot(from, service), UpgradeFailures.SERVICE_RESTART_FAILED);
        if ("true".equals(out.value("rebooted"))) {
          return checked(host, service, from, out);
        }
        lastProblem = "still up in boot " + from;
      } catch (ApplicationFailure e) {
        if (!UpgradeFailures.HOST_UNREACHABLE.equals(e.getType())) {
          throw e; // a changed host key, refused credentials, a failing script: never waited out
        }
        lastProblem = e.getOriginalMessage();
      }
      progress.accept(new RebootProgress(from, "waiting for " + host.nodeName() + " to come back (attempt "
          + attempts + ": " + lastProblem + ")"));
      pause();
    }
    throw UpgradeFailures.nonRetryable(UpgradeFailures.HOST_DID_NOT_RETURN,
        host.nodeName() + " did not come back after the reboot from boot " + from + " (" + attempts
            + " attempts; last: " + lastProblem + ")");
  }

  private void requestReboot(HostAccess host, HostScripts scripts, String from, ScriptDeadline budget) {
    try (HostConnection conn = ssh.open(host, budget)) {
      ScriptOutput out = conn.run(scripts.reboot(from), UpgradeFailures.SERVICE_RESTART_FAILED);
      log.info("restart: {} {} (from boot {})", host.nodeName(),
          "true".equals(out.value("already_rebooted")) ? "had rebooted already" : "rebooting", from);
    } catch (ApplicationFailure e) {
      if (!UpgradeFailures.HOST_UNREACHABLE.equals(e.getType())) {
        throw e;
      }
      // The session may drop as the host goes down: the wait below observes the boot ID either way.
      log.info("restart: {} dropped the session while rebooting: {}", host.nodeName(), e.getOriginalMessage());
    }
  }

  private static ServiceResult checked(HostAccess host, String service, String from, ScriptOutput out) {
    String booted = out.value("booted_entry");
    if ("true".equals(out.value("boot_fell_back"))) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.OS_IMAGE_DID_NOT_BOOT,
          host.nodeName() + " came back in boot entry " + booted + " instead of " + out.value("wanted_entry")
              + " (boot " + out.value("boot_id") + "): Kairos boot assessment fell back, the new image did not boot");
    }
    boolean active = "true".equals(out.value("service_active"));
    log.info("restart: {} rebooted (boot {} -> {}) into {}; {} active={}", host.nodeName(), from,
        out.value("boot_id"), booted, service, active);
    return new ServiceResult(service, active);
  }

  private void pause() {
    try {
      sleeper.sleep(POLL);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw UpgradeFailures.retryable(UpgradeFailures.HOST_UNREACHABLE, "interrupted while waiting for the host");
    }
  }
}
