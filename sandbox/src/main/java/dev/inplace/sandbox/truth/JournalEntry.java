package dev.inplace.sandbox.truth;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One line of a host's journal, as the product's scripts write it (scripts/lib/journal.sh): {@code
 * ts=<epoch seconds> pid=<bash pid> script=<template> wf=<workflow ID> run=<run ID>
 * attempt=<activity attempt> event=<begin|end|act> [key=value...]}. An end carries {@code exit=<n>}
 * or {@code signal=<HUP|INT|TERM|PIPE>}; an act carries {@code action=} and what the script observed
 * before it (see {@link JournalAudit}).
 *
 * @param host the node whose journal holds the line
 * @param line the line's number in that journal (1 for the first)
 * @param timestamp seconds since the epoch, as written ({@code EPOCHREALTIME})
 * @param pid the script's bash process ID
 * @param script the template name, e.g. {@code install}
 * @param fields what follows {@code event=...}, in order
 */
public record JournalEntry(
    String host,
    int line,
    String timestamp,
    long pid,
    String script,
    String workflowId,
    String runId,
    int attempt,
    Event event,
    Map<String, String> fields) {

  public enum Event {
    BEGIN,
    END,
    ACT
  }

  public JournalEntry {
    fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }

  /**
   * Parses one journal line.
   *
   * @throws IllegalArgumentException when the line is not a journal line
   */
  public static JournalEntry parse(String host, int lineNumber, String text) {
    Map<String, String> head = new LinkedHashMap<>();
    Map<String, String> fields = new LinkedHashMap<>();
    boolean afterEvent = false;
    for (String token : text.strip().split(" +")) {
      int eq = token.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("journal line " + lineNumber + " on " + host + ": not key=value: '" + token + "'");
      }
      String key = token.substring(0, eq);
      String value = token.substring(eq + 1);
      if (afterEvent) {
        fields.put(key, value);
      } else {
        head.put(key, value);
        afterEvent = key.equals("event");
      }
    }
    for (String key : new String[] {"ts", "pid", "script", "wf", "run", "attempt", "event"}) {
      if (!head.containsKey(key)) {
        throw new IllegalArgumentException("journal line " + lineNumber + " on " + host + ": no " + key + "=");
      }
    }
    Event event =
        switch (head.get("event")) {
          case "begin" -> Event.BEGIN;
          case "end" -> Event.END;
          case "act" -> Event.ACT;
          default -> throw new IllegalArgumentException(
              "journal line " + lineNumber + " on " + host + ": unknown event " + head.get("event"));
        };
    try {
      return new JournalEntry(
          host,
          lineNumber,
          head.get("ts"),
          Long.parseLong(head.get("pid")),
          head.get("script"),
          head.get("wf"),
          head.get("run"),
          Integer.parseInt(head.get("attempt")),
          event,
          fields);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("journal line " + lineNumber + " on " + host + ": bad number: " + e.getMessage());
    }
  }

  /** The exit status of an end line, when the script exited (not killed by a signal). */
  public Optional<Integer> exit() {
    String exit = fields.get("exit");
    try {
      return exit == null ? Optional.empty() : Optional.of(Integer.parseInt(exit));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** The action of an act line ({@code swap}, {@code restore}, {@code restart}, ...), else empty. */
  public String action() {
    return fields.getOrDefault("action", "");
  }

  /** A field after {@code event=}, or empty. */
  public String field(String key) {
    return fields.getOrDefault(key, "");
  }
}
