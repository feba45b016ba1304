package dev.inplace.workflows.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No source file of the workflows module is over 400 lines (issue 14; the project's rule: a workflow
 * class over 400 lines is a sign to split it, by composition into collaborators such as NodeLoop,
 * RunStatus or ControlPlanePause).
 */
class ClassSizeTest {
  static final int MAX_LINES = 400;
  private static final Path SOURCES = Path.of("src", "main", "java");

  private static long lines(Path file) {
    try (Stream<String> lines = Files.lines(file)) {
      return lines.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void noSourceFileOfTheWorkflowsModuleIsOver400Lines() throws IOException {
    List<Path> sources;
    try (Stream<Path> files = Files.walk(SOURCES)) {
      sources = files.filter(f -> f.toString().endsWith(".java")).toList();
    }
    assertTrue(sources.size() > 50, "read " + sources.size() + " files under " + SOURCES.toAbsolutePath());
    List<String> over = sources.stream()
        .filter(f -> lines(f) > MAX_LINES)
        .map(f -> SOURCES.relativize(f) + " (" + lines(f) + " lines)")
        .toList();
    assertEquals(List.of(), over, "split these by composition");
  }
}
