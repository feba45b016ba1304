package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stack's class archives: written by a process that stops cleanly, then mapped; never a cut one. */
class ClassArchivesTest {
  @TempDir Path dir;

  private List<String> classpath() throws Exception {
    Path jar = dir.resolve("lib/a.jar");
    Files.createDirectories(jar.getParent());
    if (!Files.exists(jar)) {
      Files.writeString(jar, "not really a jar");
    }
    return List.of(jar.toString());
  }

  @Test
  void aProcessWithoutAnArchiveWritesOneThatItsSuccessorsMapOnceItStoppedCleanly() throws Exception {
    ClassArchives archives = ClassArchives.in(dir.resolve("cds"), classpath());
    StackLayout layout = new StackLayout(dir.resolve("stack"));
    assertTrue(archives.missing("worker"));

    List<String> first = archives.options(layout, "worker-1");
    assertEquals(List.of("-XX:ArchiveClassesAtExit=" + layout.pendingArchive("worker-1")), first);
    Files.writeString(layout.pendingArchive("worker-1"), "what the JVM wrote at exit");
    ClassArchives.ended(layout, "worker-1", true);

    assertFalse(archives.missing("worker"));
    Path archive = archives.archive("worker").orElseThrow();
    assertEquals("what the JVM wrote at exit", Files.readString(archive));
    assertEquals(List.of("-XX:SharedArchiveFile=" + archive), archives.options(layout, "worker-2"));
    assertFalse(Files.exists(layout.pendingArchive("worker-1")));
    assertTrue(archives.missing("temporal"), "each kind of process has its own archive");
  }

  @Test
  void theEstateRunsWithoutAnArchiveSinceJdk17CrashedItLoadingALambdaFromOne() throws Exception {
    ClassArchives archives = ClassArchives.in(dir.resolve("cds"), classpath());
    StackLayout layout = new StackLayout(dir.resolve("stack"));

    assertEquals(List.of(), archives.options(layout, StackLayout.ESTATE));
    assertFalse(archives.missing("estate"), "nothing to write for the estate");
    assertFalse(Files.exists(layout.pendingArchive(StackLayout.ESTATE)));
  }

  @Test
  void theArchiveOfAProcessKilledOrStoppedByForceIsDropped() throws Exception {
    ClassArchives archives = ClassArchives.in(dir.resolve("cds"), classpath());
    StackLayout layout = new StackLayout(dir.resolve("stack"));
    archives.options(layout, "worker-1");
    Files.writeString(layout.pendingArchive("worker-1"), "cut short");

    ClassArchives.ended(layout, "worker-1", false);

    assertTrue(archives.missing("worker"));
    assertFalse(Files.exists(layout.pendingArchive("worker-1")));
  }

  @Test
  void aRebuiltJarGetsANewArchive() throws Exception {
    List<String> classpath = classpath();
    Path before = ClassArchives.in(dir.resolve("cds"), classpath).archive("worker").orElseThrow();
    Files.setLastModifiedTime(Path.of(classpath.get(0)), FileTime.fromMillis(System.currentTimeMillis() + 60_000));

    assertNotEquals(before, ClassArchives.in(dir.resolve("cds"), classpath).archive("worker").orElseThrow());
  }

  @Test
  void offWithoutADirectoryOrWithClassesOutsideJars() throws Exception {
    StackLayout layout = new StackLayout(dir.resolve("stack"));
    ClassArchives off = ClassArchives.in(null, classpath());
    assertFalse(off.enabled());
    assertEquals(List.of(), off.options(layout, "worker-1"));
    assertFalse(off.missing("worker"));

    ClassArchives withClasses = ClassArchives.in(dir.resolve("cds"), List.of(classpath().get(0), dir.resolve("lib").toString()));
    assertFalse(withClasses.enabled(), "JDK 17 writes no archive for a classpath with a directory");
  }
}
