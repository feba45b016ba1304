package dev.inplace.sandbox.hosts;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Ground truth of who reached the hosts: every SSH session any embedded (MINA) host server accepted,
 * authenticated or not. A refusal before any host step proves itself with zero here.
 */
public final class SshSessions {
  private final AtomicLong opened = new AtomicLong();

  void opened() {
    opened.incrementAndGet();
  }

  /** Sessions opened so far, on every host. */
  public long count() {
    return opened.get();
  }
}
