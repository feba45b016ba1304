package dev.inplace.sandbox.stack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A real headless Chromium driven over its DevTools protocol (a WebSocket, {@code java.net.http}):
 * one tab, navigated to a URL, its rendered text read the way an operator reads it ({@code
 * document.body.innerText}: only what is displayed) and its viewport saved as a PNG. The browser is
 * Debian's {@code chromium} ({@code apt-get install -y chromium}) or the one {@code
 * -Dinplace.chromium=PATH} names; it runs with its own profile in a directory the caller owns, no
 * network of its own (no updates, sync or first-run pages), and is stopped with everything it
 * started when closed.
 */
final class HeadlessChromium implements AutoCloseable {
  static final Path DEFAULT_EXECUTABLE = Path.of("/usr/bin/chromium");
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

  private final ObjectMapper json = new ObjectMapper();
  private final Process process;
  private final Path log;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
  private final String session;

  /** The browser this machine has: {@code -Dinplace.chromium}, else /usr/bin/chromium. */
  static Path executable() {
    String configured = System.getProperty("inplace.chromium");
    return configured == null || configured.isBlank() ? DEFAULT_EXECUTABLE : Path.of(configured);
  }

  /** Starts the browser with its profile in {@code dir} and opens one tab of {@code width} x {@code height}. */
  static HeadlessChromium start(Path dir, int width, int height) throws Exception {
    Path browser = executable();
    if (!Files.isExecutable(browser)) {
      throw new IllegalStateException("no Chromium at " + browser + ": apt-get install -y chromium (or -Dinplace.chromium=PATH)");
    }
    Path profile = Files.createDirectories(dir.resolve("chromium-profile"));
    Files.deleteIfExists(profile.resolve("DevToolsActivePort")); // a previous browser's, naming a port long closed
    Path log = dir.resolve("chromium.log");
    List<String> command = new ArrayList<>(List.of(browser.toString(),
        "--headless", "--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
        "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
        "--user-data-dir=" + profile, "--window-size=" + width + "," + height, "about:blank"));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      return new HeadlessChromium(process, log, devToolsUrl(process, profile, log), width, height);
    } catch (Exception | Error e) {
      stop(process, false);
      throw e;
    }
  }

  /** The browser's DevTools endpoint, from the {@code DevToolsActivePort} file it writes into its profile. */
  private static URI devToolsUrl(Process process, Path profile, Path log) throws Exception {
    Path portFile = profile.resolve("DevToolsActivePort");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (Files.isRegularFile(portFile)) {
        List<String> lines = Files.readAllLines(portFile, StandardCharsets.UTF_8);
        if (lines.size() >= 2 && !lines.get(1).isBlank()) {
          return URI.create("ws://127.0.0.1:" + lines.get(0).trim() + lines.get(1).trim());
        }
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("Chromium exited (" + process.exitValue() + "): " + Files.readString(log));
      }
      Thread.sleep(100);
    }
    throw new TimeoutException("Chromium wrote no DevToolsActivePort in 60 s: " + Files.readString(log));
  }

  private HeadlessChromium(Process process, Path log, URI devTools, int width, int height) throws Exception {
    this.process = process;
    this.log = log;
    this.socket = HttpClient.newHttpClient().newWebSocketBuilder()
        .connectTimeout(Duration.ofSeconds(10))
        .buildAsync(devTools, new Replies())
        .get(20, TimeUnit.SECONDS);
    String target = call(null, "Target.createTarget", params().put("url", "about:blank")).get("targetId").asText();
    this.session = call(null, "Target.attachToTarget", params().put("targetId", target).put("flatten", true))
        .get("sessionId").asText();
    call(session, "Emulation.setDeviceMetricsOverride",
        params().put("width", width).put("height", height).put("deviceScaleFactor", 1).put("mobile", false));
    call(session, "Page.enable", params());
  }

  /** Opens {@code url} in the tab (the page then renders on its own; see {@link #awaitText}). */
  void navigate(String url) throws Exception {
    JsonNode result = call(session, "Page.navigate", params().put("url", url));
    if (result.hasNonNull("errorText")) {
      throw new IOException("Chromium could not open " + url + ": " + result.get("errorText").asText());
    }
  }

  /**
   * What the page displays now, as text: {@code document.body.innerText}, then that of each displayed
   * same-origin frame (the Temporal UI renders user metadata, such as a run's summary and current
   * details, as Markdown in frames of its own {@code /render} page).
   */
  String text() throws Exception {
    return evaluate("(() => { const shown = d => d && d.body ? d.body.innerText : '';"
        + " const frames = [...document.querySelectorAll('iframe')].filter(f => f.offsetParent !== null)"
        + ".map(f => { try { return shown(f.contentDocument); } catch (crossOrigin) { return ''; } });"
        + " return [shown(document), ...frames].join('\\n'); })()").asText();
  }

  /**
   * Waits until the displayed text satisfies {@code shown} and returns it; fails after {@code timeout}
   * with what the page displayed last.
   */
  String awaitText(Predicate<String> shown, Duration timeout, String what) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    String text = "";
    while (System.nanoTime() < deadline) {
      text = text();
      if (shown.test(text)) {
        return text;
      }
      Thread.sleep(500);
    }
    throw new AssertionError("the page never showed " + what + " in " + timeout.toSeconds() + " s; it showed:\n"
        + (text.length() > 6000 ? text.substring(0, 6000) + "\n[...]" : text));
  }

  /**
   * Opens {@code url} and waits until its displayed text satisfies {@code shown}, opening it again
   * every {@code reloadEvery} that it does not (as a reader presses reload: the Temporal UI shows
   * "500 Internal Error" for good when its server's first call to a just-started Temporal fails);
   * fails after {@code timeout} with what the page displayed last.
   */
  String open(String url, Predicate<String> shown, Duration reloadEvery, Duration timeout, String what)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      navigate(url);
      Duration left = Duration.ofNanos(deadline - System.nanoTime());
      try {
        return awaitText(shown, left.compareTo(reloadEvery) < 0 ? left : reloadEvery, what);
      } catch (AssertionError notYet) {
        if (System.nanoTime() + reloadEvery.toNanos() / 4 >= deadline) {
          throw new AssertionError(url + ": " + notYet.getMessage());
        }
      }
    }
  }

  /** Clicks the first displayed element whose own text is exactly {@code label}; false when there is none. */
  boolean clickText(String label) throws Exception {
    String script = "(() => { const label = " + json.writeValueAsString(label) + ";"
        + " const all = [...document.querySelectorAll('button, a, [role=tab], [role=button], label, span')];"
        + " const hit = all.find(e => e.offsetParent !== null && e.innerText && e.innerText.trim() === label);"
        + " if (!hit) return false; hit.click(); return true; })()";
    return evaluate(script).asBoolean();
  }

  /**
   * Scrolls the innermost element that displays {@code text} to {@code marginTop} pixels below the top
   * of its scrolling containers (the page's and any panel's, as a reader scrolling to it would; the
   * margin clears a sticky header); false when no element displays it.
   */
  boolean scrollTo(String text, int marginTop) throws Exception {
    String script = "(() => { const want = " + json.writeValueAsString(text) + ";"
        + " const holds = e => e.textContent && e.textContent.includes(want);"
        + " const hit = [...document.querySelectorAll('body *')]"
        + ".find(e => holds(e) && ![...e.children].some(holds) && e.getClientRects().length > 0);"
        + " if (!hit) return false; hit.style.scrollMarginTop = '" + marginTop + "px';"
        + " hit.scrollIntoView({block: 'start', behavior: 'instant'}); return true; })()";
    return evaluate(script).asBoolean();
  }

  /** Saves what the viewport shows as a PNG. */
  void screenshot(Path png) throws Exception {
    JsonNode shot = call(session, "Page.captureScreenshot", params().put("format", "png"));
    Files.createDirectories(png.toAbsolutePath().getParent());
    Files.write(png, Base64.getDecoder().decode(shot.get("data").asText()));
  }

  JsonNode evaluate(String expression) throws Exception {
    JsonNode result = call(session, "Runtime.evaluate",
        params().put("expression", expression).put("returnByValue", true).put("awaitPromise", true));
    if (result.has("exceptionDetails")) {
      throw new IllegalStateException("the page threw: " + result.get("exceptionDetails"));
    }
    return result.path("result").path("value");
  }

  private ObjectNode params() {
    return json.createObjectNode();
  }

  /** Sends one DevTools command and waits for its reply; a protocol error fails the call. */
  private JsonNode call(String sessionId, String method, ObjectNode params) throws Exception {
    int id = ids.incrementAndGet();
    ObjectNode message = json.createObjectNode().put("id", id).put("method", method);
    message.set("params", params);
    if (sessionId != null) {
      message.put("sessionId", sessionId);
    }
    CompletableFuture<JsonNode> reply = new CompletableFuture<>();
    pending.put(id, reply);
    synchronized (socket) {
      socket.sendText(json.writeValueAsString(message), true).get(10, TimeUnit.SECONDS);
    }
    JsonNode answer;
    try {
      answer = reply.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new TimeoutException(method + ": no reply from Chromium in " + COMMAND_TIMEOUT.toSeconds() + " s");
    } finally {
      pending.remove(id);
    }
    if (answer.has("error")) {
      throw new IOException(method + " failed: " + answer.get("error"));
    }
    return answer.path("result");
  }

  /** Reassembles the browser's messages and completes the call each reply answers; events are ignored. */
  private final class Replies implements WebSocket.Listener {
    private final StringBuilder partial = new StringBuilder();

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
      partial.append(data);
      if (last) {
        String text = partial.toString();
        partial.setLength(0);
        try {
          JsonNode message = json.readTree(text);
          if (message.has("id")) {
            CompletableFuture<JsonNode> reply = pending.get(message.get("id").asInt());
            if (reply != null) {
              reply.complete(message);
            }
          }
        } catch (IOException unreadable) {
          pending.values().forEach(reply -> reply.completeExceptionally(unreadable));
        }
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      IOException closed = new IOException("Chromium closed the DevTools connection: " + statusCode + " " + reason);
      pending.values().forEach(reply -> reply.completeExceptionally(closed));
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      pending.values().forEach(reply -> reply.completeExceptionally(error));
    }
  }

  Path log() {
    return log;
  }

  @Override
  public void close() {
    try {
      call(null, "Browser.close", params());
    } catch (Exception alreadyGone) {
      // stopped below either way
    }
    socket.abort();
    stop(process, true);
  }

  /**
   * Stops the browser and every process it started (renderers, GPU and zygote helpers); {@code closing}:
   * it was asked to close and gets 5 s to exit on its own first.
   */
  private static void stop(Process process, boolean closing) {
    List<ProcessHandle> children = process.toHandle().descendants().toList();
    try {
      if (!closing || !process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }
}
