package dev.inplace.sandbox.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The command blocks of docs/runbook.md, by the name of the {@code <!-- runbook-it: NAME -->} comment
 * right before each fenced {@code sh} block: what {@link RunbookCommandsIT} runs, as written.
 */
final class RunbookBlocks {
  static final Path DOC = Path.of("..", "docs", "runbook.md");

  private static final Pattern MARKED = Pattern.compile("<!-- runbook-it: ([a-z-]+) -->\\n```sh\\n(.*?)\\n```", Pattern.DOTALL);
  private static final Pattern ANY_SH_BLOCK = Pattern.compile("```sh\\n");

  private final Map<String, String> blocks;

  private RunbookBlocks(Map<String, String> blocks) {
    this.blocks = blocks;
  }

  /** Reads the page; every {@code sh} block on it must be marked (none goes untested), each name once. */
  static RunbookBlocks read() throws IOException {
    String text = Files.readString(DOC);
    Map<String, String> blocks = new LinkedHashMap<>();
    Matcher marked = MARKED.matcher(text);
    while (marked.find()) {
      if (blocks.put(marked.group(1), marked.group(2)) != null) {
        throw new IllegalStateException(DOC + ": two blocks are marked runbook-it: " + marked.group(1));
      }
    }
    long all = ANY_SH_BLOCK.matcher(text).results().count();
    if (all != blocks.size()) {
      throw new IllegalStateException(DOC + " has " + all + " sh blocks but " + blocks.size()
          + " marked for RunbookCommandsIT (" + blocks.keySet() + "): mark every block it must run");
    }
    return new RunbookBlocks(blocks);
  }

  String block(String name) {
    String block = blocks.get(name);
    if (block == null) {
      throw new IllegalStateException(DOC + " has no block marked runbook-it: " + name + "; it has " + blocks.keySet());
    }
    return block;
  }

  List<String> names() {
    return List.copyOf(blocks.keySet());
  }
}
