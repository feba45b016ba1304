package dev.inplace.activities.ssh;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads a stream to its end, keeping at most {@code limit} bytes: the start (stdout, whose
 * key=value lines are parsed) or the end (stderr, whose last lines explain a failure). A chatty
 * script cannot exhaust the worker's memory.
 */
final class OutputCapture {
  private final int limit;
  private final boolean keepEnd;
  private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
  private byte[] ring;
  private long total;
  private volatile long lastHeardNanos = Long.MIN_VALUE;

  OutputCapture(int limit, boolean keepEnd) {
    this.limit = limit;
    this.keepEnd = keepEnd;
  }

  void drain(InputStream in) throws IOException {
    byte[] buffer = new byte[8192];
    int n;
    while ((n = in.read(buffer)) != -1) {
      accept(buffer, n);
    }
  }

  synchronized void accept(byte[] data, int length) {
    lastHeardNanos = System.nanoTime();
    if (!keepEnd) {
      int room = (int) Math.max(0, limit - total);
      kept.write(data, 0, Math.min(room, length));
    } else {
      if (ring == null) {
        ring = new byte[limit];
      }
      for (int i = 0; i < length; i++) {
        ring[(int) ((total + i) % limit)] = data[i];
      }
    }
    total += length;
  }

  /** When the stream last delivered bytes, on {@link System#nanoTime} ({@code Long.MIN_VALUE}: never). */
  long lastHeardNanos() {
    return lastHeardNanos;
  }

  synchronized boolean truncated() {
    return total > limit;
  }

  synchronized String text() {
    if (!keepEnd) {
      return kept.toString(StandardCharsets.UTF_8);
    }
    if (ring == null) {
      return "";
    }
    int size = (int) Math.min(total, limit);
    byte[] ordered = new byte[size];
    long start = total - size;
    for (int i = 0; i < size; i++) {
      ordered[i] = ring[(int) ((start + i) % limit)];
    }
    return new String(ordered, StandardCharsets.UTF_8);
  }
}
