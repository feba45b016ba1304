package dev.inplace.app;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The instructions of deploy/image/Dockerfile, as docker reads them (continuations, comments). */
record Dockerfile(List<Instruction> instructions) {
  record Instruction(String keyword, String arguments) {}

  static Path path() {
    return Path.of(System.getProperty("inplace.dockerfile", "../deploy/image/Dockerfile"));
  }

  static Dockerfile read(Path file) {
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Dockerfile parse(String text) {
    List<Instruction> instructions = new ArrayList<>();
    StringBuilder logical = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String trimmed = line.strip();
      if (logical.length() == 0 && (trimmed.isEmpty() || trimmed.startsWith("#"))) {
        continue;
      }
      if (trimmed.endsWith("\\")) {
        logical.append(trimmed, 0, trimmed.length() - 1).append(' ');
        continue;
      }
      logical.append(trimmed);
      String full = logical.toString().strip();
      logical.setLength(0);
      int space = full.indexOf(' ');
      instructions.add(new Instruction(full.substring(0, space).toUpperCase(), full.substring(space + 1).strip()));
    }
    return new Dockerfile(List.copyOf(instructions));
  }

  List<String> all(String keyword) {
    return instructions.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments).toList();
  }

  String last(String keyword) {
    List<String> found = all(keyword);
    if (found.isEmpty()) {
      throw new AssertionError("the Dockerfile has no " + keyword);
    }
    return found.get(found.size() - 1);
  }

  /** The ENTRYPOINT in exec (JSON) form; the shell form would keep signals from the JVM. */
  List<String> entrypoint() {
    String args = last("ENTRYPOINT");
    if (!args.startsWith("[")) {
      throw new AssertionError("ENTRYPOINT must be in exec form [\"java\", ...], got: " + args);
    }
    try {
      return new ObjectMapper().readValue(args, new TypeReference<List<String>>() {});
    } catch (IOException e) {
      throw new AssertionError("ENTRYPOINT is not a JSON array: " + args, e);
    }
  }

  /** The ENV instructions ({@code KEY=value} form), in order. */
  Map<String, String> env() {
    Map<String, String> env = new LinkedHashMap<>();
    for (String args : all("ENV")) {
      for (String pair : args.split("\\s+")) {
        int eq = pair.indexOf('=');
        if (eq <= 0) {
          throw new AssertionError("ENV must use KEY=value, got: " + args);
        }
        env.put(pair.substring(0, eq), pair.substring(eq + 1));
      }
    }
    return env;
  }
}
