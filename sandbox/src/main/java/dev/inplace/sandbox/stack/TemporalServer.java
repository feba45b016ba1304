package dev.inplace.sandbox.stack;

/**
 * Which Temporal server the local stack runs as its {@code temporal} process ({@code --temporal}).
 * The test server is the default and needs nothing but this build; the dev server is the real
 * server, built by the test bed (docs/local-stack.md).
 */
public enum TemporalServer {
  /** Temporal's Java test server ({@link TemporalServerMain}): in memory, no List visibility, no UI. */
  TEST_SERVER("test-server"),
  /**
   * The real Temporal server as the Temporal CLI's {@code temporal server start-dev} runs it: SQLite
   * persistence in the stack's directory, SQL visibility (List and Count queries) and the Web UI.
   */
  DEV_SERVER("dev-server");

  private final String cliName;

  TemporalServer(String cliName) {
    this.cliName = cliName;
  }

  public String cliName() {
    return cliName;
  }

  /** Reads {@code --temporal}'s value. */
  public static TemporalServer parse(String text) {
    for (TemporalServer server : values()) {
      if (server.cliName.equals(text)) {
        return server;
      }
    }
    throw new IllegalArgumentException("--temporal must be test-server or dev-server, got '" + text + "'");
  }
}
