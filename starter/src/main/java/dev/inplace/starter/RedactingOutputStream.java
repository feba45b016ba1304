package dev.inplace.starter;

import dev.inplace.workflows.failure.CredentialRedactor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * What the CLI prints, with credentials redacted ({@link CredentialRedactor}) before it reaches the
 * terminal: text is passed on a whole line at a time (a {@code watch} still streams), and a PEM
 * private key that spans lines is held until its END line, so it is redacted as one block. A block
 * that never ends is redacted from its BEGIN line when more than {@value #MAX_HELD} bytes are held or
 * the command ends ({@link #close()}, which does not close the stream underneath).
 */
final class RedactingOutputStream extends OutputStream {
  static final int MAX_HELD = 1 << 20;
  private static final Pattern OPEN_PRIVATE_KEY =
      Pattern.compile("-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?!<redacted>)(?![\\s\\S]*-----END [A-Z0-9 ]*PRIVATE KEY)");

  private final OutputStream out;
  private final ByteArrayOutputStream held = new ByteArrayOutputStream();

  RedactingOutputStream(OutputStream out) {
    this.out = out;
  }

  @Override
  public synchronized void write(int b) throws IOException {
    held.write(b);
    if (b == '\n') {
      passCompleteLines(false);
    }
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    held.write(b, off, len);
    for (int i = off; i < off + len; i++) {
      if (b[i] == '\n') {
        passCompleteLines(false);
        return;
      }
    }
  }

  /** Passes on the complete lines held; a partial line waits for its end (or {@link #close()}). */
  @Override
  public synchronized void flush() throws IOException {
    passCompleteLines(false);
    out.flush();
  }

  /** Passes on everything held, redacted; the stream underneath stays open (it may be System.out). */
  @Override
  public synchronized void close() throws IOException {
    passCompleteLines(true);
    out.flush();
  }

  private void passCompleteLines(boolean all) throws IOException {
    byte[] bytes = held.toByteArray();
    int end = all ? bytes.length : lastNewline(bytes) + 1;
    if (end <= 0) {
      return;
    }
    String text = new String(bytes, 0, end, StandardCharsets.UTF_8);
    if (!all && bytes.length <= MAX_HELD) {
      // Hold a private key whose END line has not come yet, and what follows it.
      var open = OPEN_PRIVATE_KEY.matcher(text);
      if (open.find()) {
        int start = text.lastIndexOf('\n', open.start()) + 1;
        text = text.substring(0, start);
        end = text.getBytes(StandardCharsets.UTF_8).length;
      }
    }
    out.write(CredentialRedactor.redact(text).getBytes(StandardCharsets.UTF_8));
    held.reset();
    held.write(bytes, end, bytes.length - end);
  }

  private static int lastNewline(byte[] bytes) {
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }
}
