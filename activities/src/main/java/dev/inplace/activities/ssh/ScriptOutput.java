package dev.inplace.activities.ssh;

import java.util.ArrayList;
import java.util.List;

/**
 * What a remote script printed. Scripts report facts as {@code key=value} lines on stdout.
 *
 * @param stdout standard output, at most {@link RemoteShell#OUTPUT_LIMIT} bytes (the start is kept)
 * @param stderr standard error, at most {@link RemoteShell#OUTPUT_LIMIT} bytes (the end is kept)
 */
public record ScriptOutput(int exitStatus, String stdout, String stderr) {

  /** Values of every {@code key=...} line, in order. */
  public List<String> values(String key) {
    String prefix = key + "=";
    List<String> values = new ArrayList<>();
    for (String line : stdout.split("\n", -1)) {
      if (line.startsWith(prefix)) {
        values.add(line.substring(prefix.length()));
      }
    }
    return values;
  }

  /** The value of the single {@code key=...} line, or null when the script printed none. */
  public String value(String key) {
    List<String> values = values(key);
    if (values.size() > 1) {
      throw new IllegalStateException("script printed '" + key + "=' " + values.size() + " times");
    }
    return values.isEmpty() ? null : values.get(0);
  }
}
