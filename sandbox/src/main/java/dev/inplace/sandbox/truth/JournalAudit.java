package dev.inplace.sandbox.truth;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks, per host, that no destructive action was applied twice without the observation between
 * that made the repeat safe (docs/reliability.md, "Repeated destructive actions", is the definition
 * this class implements).
 *
 * <p>The destructive actions are the {@code event=act} lines the scripts write just before they act:
 * {@code swap} (a binary put in place, by {@code path}), {@code restore} (a file put back or removed
 * by the rollback, by {@code path}), {@code restart} (a service restarted, by {@code service}),
 * {@code stop} (k0s stopped before its swap, by {@code service}) and {@code kubeadm-upgrade} (by
 * {@code mode} and {@code version}); on Kairos hosts {@code os-upgrade} (an OS image written, by {@code
 * path} and {@code to} digest, with the boot plan's digest as {@code from}), {@code reboot} (by the
 * {@code from_boot} of the boot plan, with the boot ID it read as {@code observed}) and {@code
 * boot-select} (the fallback entry selected, by {@code entry}, with the plan's state before and
 * after as {@code from} and {@code to}). A <em>repeat</em> is an act with the same action on the same
 * target as an earlier act on the same host. A repeat is safe when at least one of these holds:
 *
 * <ol>
 *   <li>its own observation shows the earlier action's effect absent: swap and restore journal
 *       {@code from=} (the digest they read, or {@code absent}/{@code present}, or for swap {@code
 *       differs}: the target is not the staged file whose copy has the {@code to} digest) and {@code
 *       to=}, safe when they differ; stop is safe with {@code from=running}; kubeadm-upgrade is safe with
 *       {@code observed=manifest-behind} (the API server manifest was seen not at the target);
 *       restart journals no observation of its own;
 *   <li>the script run of the earlier act did not end with exit status 0 (it was cut off, killed, or
 *       failed), so its effect was never confirmed;
 *   <li>for restart only: a swap or restore was journaled on the host after the earlier restart, so
 *       the service's binary is no longer the one it was restarted with.
 * </ol>
 */
public final class JournalAudit {
  /** The actions the audit knows; an act with another action is reported as unknown. */
  public static final Set<String> ACTIONS =
      Set.of("swap", "restore", "restart", "stop", "kubeadm-upgrade", "os-upgrade", "reboot", "boot-select");

  /**
   * A repeated destructive action without the observation that made it safe, or a journal the audit
   * cannot read.
   *
   * @param host the node
   * @param action the action ({@code swap}, ...), or {@code unreadable}/{@code unknown}
   * @param target what it acted on (path, service, mode@version)
   * @param earlier the journal line of the earlier application (0 when none)
   * @param repeat the journal line of the repeat, or of the unreadable line
   * @param reason why the repeat was not safe, in words
   */
  public record Violation(String host, String action, String target, int earlier, int repeat, String reason) {}

  private JournalAudit() {}

  public static List<Violation> audit(Collection<HostJournal> journals) {
    List<Violation> violations = new ArrayList<>();
    journals.forEach(j -> violations.addAll(audit(j)));
    return violations;
  }

  public static List<Violation> audit(HostJournal journal) {
    List<Violation> violations = new ArrayList<>();
    for (String line : journal.unreadable()) {
      violations.add(new Violation(journal.host(), "unreadable", "", 0, 0, line));
    }
    Map<JournalEntry, ScriptRun> runOf = new IdentityHashMap<>();
    for (ScriptRun run : journal.runs()) {
      run.acts().forEach(a -> runOf.put(a, run));
    }
    Map<String, JournalEntry> last = new HashMap<>();
    // The journal line of the last swap or restore on the host (0: none yet).
    int lastFileChange = 0;
    for (JournalEntry e : journal.entries()) {
      if (e.event() != JournalEntry.Event.ACT) {
        continue;
      }
      String action = e.action();
      if (!ACTIONS.contains(action)) {
        violations.add(new Violation(journal.host(), "unknown", action, 0, e.line(), "unknown action '" + action + "'"));
        continue;
      }
      String key = action + " " + target(e);
      JournalEntry earlier = last.put(key, e);
      if (earlier != null && !safeRepeat(earlier, e, runOf, lastFileChange)) {
        violations.add(
            new Violation(
                journal.host(),
                action,
                target(e),
                earlier.line(),
                e.line(),
                reason(action)));
      }
      if (action.equals("swap") || action.equals("restore")) {
        lastFileChange = e.line();
      }
    }
    return violations;
  }

  /** What an act acted on: the same target twice makes a repeat. */
  static String target(JournalEntry e) {
    return switch (e.action()) {
      case "swap", "restore", "os-upgrade" -> e.field("path") + " to " + e.field("to");
      case "restart", "stop" -> e.field("service");
      case "reboot" -> e.field("from_boot");
      case "boot-select" -> e.field("entry");
      case "kubeadm-upgrade" -> e.field("mode") + "@" + e.field("version");
      default -> "";
    };
  }

  private static boolean safeRepeat(
      JournalEntry earlier, JournalEntry repeat, Map<JournalEntry, ScriptRun> runOf, int lastFileChange) {
    if (observedEffectAbsent(repeat)) {
      return true;
    }
    ScriptRun earlierRun = runOf.get(earlier);
    if (earlierRun == null || !earlierRun.succeeded()) {
      return true; // the earlier application was never confirmed (cut off, killed or failed)
    }
    return repeat.action().equals("restart") && lastFileChange > earlier.line();
  }

  private static boolean observedEffectAbsent(JournalEntry e) {
    return switch (e.action()) {
      case "swap", "restore", "os-upgrade", "boot-select" ->
          !e.field("from").isEmpty() && !e.field("from").equals(e.field("to"));
      // Still in the boot the earlier reboot was asked from: that reboot did not happen.
      case "reboot" -> !e.field("from_boot").isEmpty() && e.field("from_boot").equals(e.field("observed"));
      case "stop" -> e.field("from").equals("running");
      case "kubeadm-upgrade" -> e.field("observed").equals("manifest-behind");
      default -> false;
    };
  }

  private static String reason(String action) {
    return switch (action) {
      case "swap", "restore" -> "applied again although the file was observed already in that state";
      case "os-upgrade" -> "wrote the OS image again although the boot plan already had it (the fallback is lost)";
      case "reboot" -> "rebooted again although the host had already rebooted from that boot";
      case "boot-select" -> "selected the boot entry again without a change of the boot plan";
      case "restart" -> "restarted again after a restart that ended with exit 0, with no swap or restore between";
      case "stop" -> "stopped again without observing it running";
      case "kubeadm-upgrade" -> "ran again after a run that ended with exit 0, without observing the API server manifest behind the target";
      default -> "repeated";
    };
  }
}
