package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ScriptRendererTest {
  private final ScriptRenderer k3s = new ScriptRenderer("k3s");

  @Test
  void quotesValuesSoTheyCannotEscapeTheirArgument() {
    assertEquals("'plain'", ScriptRenderer.quote("plain"));
    assertEquals("'it'\\''s; rm -rf /'", ScriptRenderer.quote("it's; rm -rf /"));
    assertEquals("'$(reboot)'", ScriptRenderer.quote("$(reboot)"));
  }

  @Test
  void refusesControlCharactersInValues() {
    assertThrows(IllegalArgumentException.class, () -> ScriptRenderer.quote("a\nb"));
  }

  @Test
  void repeatsARowLineOncePerRowAndDropsItForNoRows() {
    RemoteScript two =
        k3s.render(
            "stage-commit",
            new ScriptValues()
                .with("staging_dir", "/s")
                .withRows(
                    "artifacts", List.of(List.of("a", "a.1", "1"), List.of("b", "b.2", "2"))));
    assertTrue(
        two.text().contains("\ncommit_artifact 'a' 'a.1' '1'\ncommit_artifact 'b' 'b.2' '2'\n"));
    assertEquals("stage", two.step());

    RemoteScript none =
        k3s.render(
            "stage-commit",
            new ScriptValues().with("staging_dir", "/s").withRows("artifacts", List.of()));
    assertTrue(!none.text().contains("commit_artifact '"));
  }

  @Test
  void missingValueIsAnError() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> k3s.render("restart", new ScriptValues().with("service", "k3s")));
    assertTrue(e.getMessage().contains("{{active_checks}}"), e.getMessage());
  }

  @Test
  void valueWithoutPlaceholderIsAnError() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                k3s.render(
                    "restart",
                    new ScriptValues()
                        .with("service", "k3s")
                        .with("active_checks", "1")
                        .with("check_interval_seconds", "1")
                        .with("surprise", "x")));
    assertTrue(e.getMessage().contains("surprise"), e.getMessage());
  }

  @Test
  void unknownTemplateIsAnError() {
    assertThrows(IllegalArgumentException.class, () -> k3s.render("nope", new ScriptValues()));
  }

  @Test
  void includeLinesAreReplacedByTheirFragmentSoTheScriptIsSelfContained() {
    RemoteScript restart =
        k3s.render(
            "restart",
            new ScriptValues()
                .with("service", "k3s")
                .with("active_checks", "3")
                .with("check_interval_seconds", "1"));
    assertTrue(!restart.text().contains("inplace-include"), restart.text());
    // wait-active.sh's placeholders are filled like the template's own.
    assertTrue(restart.text().contains("\nattempt=1\n"), restart.text());
    assertTrue(restart.text().endsWith("exit 1\n"), restart.text());
  }

  private static final Path SCRIPTS = Path.of("src/main/resources/scripts");
  private static final Pattern FUNCTION = Pattern.compile("(?m)^([a-z0-9_]+)\\(\\) \\{");

  /** The point of the includes: a shell function is written once, in one template or fragment. */
  @Test
  void everyShellFunctionIsDefinedInOnePlaceOnly() throws IOException {
    Map<String, Path> definedIn = new HashMap<>();
    try (Stream<Path> files = Files.walk(SCRIPTS)) {
      for (Path file :
          files.filter(f -> f.toString().endsWith(".sh") && !f.getParent().endsWith("hooks")).sorted().toList()) {
        Matcher m = FUNCTION.matcher(Files.readString(file));
        while (m.find()) {
          Path first = definedIn.putIfAbsent(m.group(1), file);
          assertTrue(
              first == null,
              m.group(1) + "() is defined in both " + first + " and " + file + ": move it to scripts/lib");
        }
      }
    }
    assertTrue(definedIn.containsKey("sha256_of"), definedIn.toString());
  }

  /** A distribution's hook replaces a default in scripts/lib, function for function. */
  @Test
  void everyHookOverridesALibDefaultWithTheSameFunctions() throws IOException {
    try (Stream<Path> files = Files.walk(SCRIPTS)) {
      for (Path hook : files.filter(f -> f.getParent().endsWith("hooks")).toList()) {
        Path fallback = SCRIPTS.resolve("lib").resolve(hook.getFileName());
        assertTrue(Files.exists(fallback), hook + " has no default " + fallback);
        assertEquals(functions(fallback), functions(hook), hook + " vs " + fallback);
      }
    }
  }

  @Test
  void aHookLineTakesTheDistributionsOwnFragmentElseTheDefault() {
    ScriptValues values = inspectValues();
    assertTrue(k3s.render("inspect", values).text().contains("  \"$1\" --version\n"));
    assertTrue(new ScriptRenderer("k0s").render("inspect", values).text().contains("  \"$1\" version\n"));
  }

  @Test
  void theReadOnlyInspectionWritesNoJournalWhileEveryOtherStepJournalsItself() {
    ScriptValues values = inspectValues();
    String inspect = k3s.render("inspect", values).text();
    assertFalse(inspect.contains("journal"), "a plan's host inspection changes no byte on the host");
    assertTrue(inspect.contains(ScriptRenderer.READ_ONLY_MARKER + "\n"));
    String restart = restartScript();
    assertTrue(restart.contains("journal begin"), "a step that acts journals its begin");
  }

  @Test
  void everyScriptPulsesWhileItRunsTheReadOnlyInspectionToo() {
    ScriptValues values = inspectValues();
    String inspect = k3s.render("inspect", values).text();
    String restart = restartScript();
    for (String script : List.of(inspect, restart)) {
      assertTrue(script.contains("pulse_loop </dev/null >/dev/null &\n"), script);
    }
    // The journal's exit trap replaces the pulse's, so it stops the pulse itself, on a signal too.
    assertTrue(restart.contains("journal_exit() {\n  pulse_stop\n"), restart);
    assertTrue(restart.contains("journal_signal() {\n  trap - EXIT \"$1\"\n  pulse_stop\n"), restart);
  }

  private static ScriptValues inspectValues() {
    return new ScriptValues()
        .with("staging_dir", "/s")
        .with("backup_dir", "/k")
        .with("bin_dir", "/b")
        .with("version_binary", "x")
        .with("service", "x")
        .withRows("install_paths", List.of());
  }

  private String restartScript() {
    return k3s.render("restart", new ScriptValues().with("service", "k3s").with("active_checks", "3")
        .with("check_interval_seconds", "1")).text();
  }

  private static List<String> functions(Path file) throws IOException {
    Matcher m = FUNCTION.matcher(Files.readString(file));
    List<String> names = new java.util.ArrayList<>();
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }
}
