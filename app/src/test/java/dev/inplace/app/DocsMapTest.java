package dev.inplace.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation is a map: the README links every page of docs/, and no relative link in the
 * README or a page points at a file that is not there (issue 14: "The README links every doc").
 */
class DocsMapTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  private static List<Path> pages() throws IOException {
    try (Stream<Path> files = Files.list(ROOT.resolve("docs"))) {
      return files.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().toList();
    }
  }

  /** The relative link targets of a markdown file, without anchors; web links and anchors alone skipped. */
  static List<String> relativeLinks(String markdown) {
    List<String> targets = new ArrayList<>();
    Matcher m = LINK.matcher(markdown);
    while (m.find()) {
      String target = m.group(1);
      if (target.startsWith("#") || target.matches("[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
        continue;
      }
      targets.add(target.contains("#") ? target.substring(0, target.indexOf('#')) : target);
    }
    return targets;
  }

  @Test
  void theReadmeLinksEveryPageOfDocs() throws IOException {
    List<String> linked = relativeLinks(Files.readString(ROOT.resolve("README.md")));
    List<Path> pages = pages();
    assertTrue(pages.size() >= 19, pages.toString());
    List<String> unlinked = pages.stream()
        .map(p -> "docs/" + p.getFileName())
        .filter(page -> !linked.contains(page))
        .toList();
    assertEquals(List.of(), unlinked, "pages of docs/ the README does not link");
  }

  @Test
  void everyRelativeLinkPointsAtAFileThatExists() throws IOException {
    List<Path> files = new ArrayList<>(pages());
    files.add(ROOT.resolve("README.md"));
    List<String> broken = new ArrayList<>();
    for (Path file : files) {
      for (String target : relativeLinks(Files.readString(file))) {
        if (!Files.exists(file.getParent().resolve(target))) {
          broken.add(ROOT.relativize(file) + " -> " + target);
        }
      }
    }
    assertEquals(List.of(), broken, "links to files that do not exist");
  }

  @Test
  void anchorsAndWebLinksAreNotTakenForFiles() {
    assertEquals(List.of("docs/k0s.md", "reliability.md"),
        relativeLinks("see [k0s](docs/k0s.md), [finding 4](reliability.md#findings), [Temporal](https://temporal.io)"
            + " and [below](#reference)"));
  }
}
