package dev.inplace.sandbox.catalogue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The example catalogues of docs/catalogue.md: each ```json block right after a {@code <!-- example -->} line. */
final class CatalogueDocs {
  static final Path DOC = Path.of("..", "docs", "catalogue.md");
  static final Path SCHEMAS = Path.of("..", "docs", "schema");
  private static final String MARKER = "<!-- example -->";

  private CatalogueDocs() {}

  static List<String> examples() throws IOException {
    List<String> lines = Files.readAllLines(DOC, StandardCharsets.UTF_8);
    List<String> examples = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (!lines.get(i).trim().equals(MARKER)) {
        continue;
      }
      if (i + 1 >= lines.size() || !lines.get(i + 1).trim().equals("```json")) {
        throw new IllegalStateException("docs/catalogue.md line " + (i + 1) + ": an example marker not followed by ```json");
      }
      StringBuilder block = new StringBuilder();
      int j = i + 2;
      for (; j < lines.size() && !lines.get(j).trim().equals("```"); j++) {
        block.append(lines.get(j)).append('\n');
      }
      if (j == lines.size()) {
        throw new IllegalStateException("docs/catalogue.md line " + (i + 1) + ": an example block that never ends");
      }
      examples.add(block.toString());
      i = j;
    }
    return examples;
  }
}
