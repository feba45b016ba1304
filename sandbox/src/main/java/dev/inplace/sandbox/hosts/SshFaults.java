package dev.inplace.sandbox.hosts;

import java.util.Random;

/**
 * Seeded SSH faults of the MINA hosts, shared by every host of an estate:
 *
 * <ul>
 *   <li><b>drop</b>: a script command's connection is closed mid-command (after a random delay of
 *       up to {@link #DROP_WITHIN_MILLIS} ms, or right after the script ended, before its exit
 *       status is sent), or an SFTP upload's connection is closed after one of its first writes;
 *   <li><b>hang</b>: a script command never returns: the script is stopped (SIGSTOP) after a random
 *       delay, or its exit status withheld if it ended first, until the client closes the channel;
 *       then it is killed, as sshd would.
 * </ul>
 *
 * <p>Each script command draws once: drop with {@code dropPercent}, else hang with {@code
 * hangPercent}; each upload draws once for a drop. The counters count the faults that bit. Settings
 * change at runtime ({@link #set}); a new setting restarts the random sequence from its seed.
 */
public final class SshFaults {
  /** The longest a dropped or hung command runs before the fault bites. */
  static final int DROP_WITHIN_MILLIS = 400;

  /** What happens to one script command. */
  public enum Fault {
    NONE,
    DROP,
    HANG
  }

  /**
   * @param dropPercent 0..100
   * @param hangPercent 0..100, with dropPercent + hangPercent at most 100
   * @param seed the random sequence's seed
   */
  public record Settings(int dropPercent, int hangPercent, long seed) {
    public Settings {
      if (dropPercent < 0 || hangPercent < 0 || dropPercent + hangPercent > 100) {
        throw new IllegalArgumentException(
            "SSH drop and hang percentages must be >= 0 and add up to at most 100, got drop "
                + dropPercent
                + " hang "
                + hangPercent);
      }
    }

    public static Settings none() {
      return new Settings(0, 0, 0);
    }
  }

  private Settings settings = Settings.none();
  private Random random = new Random(0);
  private long dropped;
  private long hung;

  public synchronized void set(Settings settings) {
    this.settings = settings;
    this.random = new Random(settings.seed());
  }

  public synchronized Settings settings() {
    return settings;
  }

  /** Connections dropped so far (commands and uploads). */
  public synchronized long dropped() {
    return dropped;
  }

  /** Commands hung so far. */
  public synchronized long hung() {
    return hung;
  }

  /** The fault of the next script command. */
  synchronized Fault nextCommand() {
    if (settings.dropPercent() == 0 && settings.hangPercent() == 0) {
      return Fault.NONE;
    }
    int draw = random.nextInt(100);
    if (draw < settings.dropPercent()) {
      return Fault.DROP;
    }
    return draw < settings.dropPercent() + settings.hangPercent() ? Fault.HANG : Fault.NONE;
  }

  /** Whether the next upload is dropped: then after how many writes (1..4), else 0. */
  synchronized int nextUploadDropAfterWrites() {
    if (settings.dropPercent() == 0 || random.nextInt(100) >= settings.dropPercent()) {
      return 0;
    }
    return 1 + random.nextInt(4);
  }

  /** How long a faulted command runs before the fault bites. */
  synchronized long delayMillis() {
    return random.nextInt(DROP_WITHIN_MILLIS + 1);
  }

  synchronized void countDrop() {
    dropped++;
  }

  synchronized void countHang() {
    hung++;
  }
}
