package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/cli.md carries the command reference generated from the picocli model. Refresh it with
 * {@code mvn -B -o -pl starter -am test -Dtest=CliReferenceTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dinplace.updateCliDocs=true}.
 */
class CliReferenceTest {
  private static final Path DOC = Path.of("..", "docs", "cli.md");

  @Test
  void docsCliMdHoldsTheReferenceGeneratedFromTheCommandModel() throws Exception {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    int begin = doc.indexOf(CliReference.BEGIN);
    int end = doc.indexOf(CliReference.END);
    assertTrue(begin >= 0 && end > begin, "docs/cli.md lacks the generated block markers");
    String committed = doc.substring(begin, end + CliReference.END.length() + 1);
    String generated = CliReference.markdown();
    if (Boolean.getBoolean("inplace.updateCliDocs")) {
      Files.writeString(DOC, doc.replace(committed, generated), StandardCharsets.UTF_8);
      return;
    }
    assertEquals(generated, committed, "docs/cli.md is stale; regenerate it (see CliReferenceTest)");
  }

  @Test
  void theReferenceCoversEveryCommandAndSubcommand() {
    String generated = CliReference.markdown();
    for (String command : new String[] {"inplace", "inplace upgrade", "inplace upgrade controlplane",
        "inplace upgrade workers", "inplace status", "inplace watch", "inplace pause", "inplace resume",
        "inplace abort", "inplace retry", "inplace skip", "inplace max-unavailable", "inplace describe",
        "inplace describe cluster", "inplace plan", "inplace history", "inplace hosts", "inplace hosts scan",
        "inplace hosts bootstrap-snippet", "inplace catalogue", "inplace catalogue add", "inplace completion"}) {
      assertTrue(generated.contains("### `" + command + "`"), command);
    }
  }
}
