package dev.inplace.sandbox.truth;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The journal of one host, parsed: its lines in the order they were appended, the lines that are not
 * journal lines (kept, never dropped silently), and the script runs they make up.
 */
public record HostJournal(String host, List<String> lines, List<JournalEntry> entries, List<String> unreadable) {
  /** Where the scripts append, relative to the node's root ({@code INPLACE_HOST_ROOT}). */
  public static final String PATH = "var/log/inplace/journal";

  public HostJournal {
    lines = List.copyOf(lines);
    entries = List.copyOf(entries);
    unreadable = List.copyOf(unreadable);
  }

  /** Parses a journal's lines; a line that is not a journal line goes to {@link #unreadable}. */
  public static HostJournal parse(String host, List<String> lines) {
    List<JournalEntry> entries = new ArrayList<>();
    List<String> unreadable = new ArrayList<>();
    int n = 0;
    for (String line : lines) {
      n++;
      if (line.isBlank()) {
        continue;
      }
      try {
        entries.add(JournalEntry.parse(host, n, line));
      } catch (IllegalArgumentException e) {
        unreadable.add(e.getMessage());
      }
    }
    return new HostJournal(host, lines, entries, unreadable);
  }

  /** Reads {@code <root>/var/log/inplace/journal}; a host where no script ran has an empty one. */
  public static HostJournal read(String host, Path root) {
    try {
      return parse(host, Files.readAllLines(root.resolve(PATH), StandardCharsets.UTF_8));
    } catch (NoSuchFileException e) {
      return parse(host, List.of());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the journal of " + host, e);
    }
  }

  /**
   * The script runs, in the order they began. A begin is paired with the next end of the same
   * process; an act belongs to the run open in its process.
   */
  public List<ScriptRun> runs() {
    Map<Long, Integer> openByPid = new HashMap<>();
    List<JournalEntry> begins = new ArrayList<>();
    Map<Integer, JournalEntry> ends = new HashMap<>();
    Map<Integer, List<JournalEntry>> acts = new LinkedHashMap<>();
    for (JournalEntry e : entries) {
      switch (e.event()) {
        case BEGIN -> {
          openByPid.put(e.pid(), begins.size());
          acts.put(begins.size(), new ArrayList<>());
          begins.add(e);
        }
        case ACT -> {
          Integer run = openByPid.get(e.pid());
          if (run != null) {
            acts.get(run).add(e);
          }
        }
        case END -> {
          Integer run = openByPid.remove(e.pid());
          if (run != null) {
            ends.put(run, e);
          }
        }
      }
    }
    List<ScriptRun> runs = new ArrayList<>();
    for (int i = 0; i < begins.size(); i++) {
      runs.add(new ScriptRun(begins.get(i), Optional.ofNullable(ends.get(i)), acts.get(i)));
    }
    return runs;
  }

  /** Runs that began and never ended: cut off mid-way. */
  public List<ScriptRun> openRuns() {
    return runs().stream().filter(ScriptRun::open).toList();
  }
}
