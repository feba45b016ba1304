package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RedactingOutputStreamTest {
  private final ByteArrayOutputStream terminal = new ByteArrayOutputStream();
  private final RedactingOutputStream redacting = new RedactingOutputStream(terminal);
  private final PrintStream out = new PrintStream(redacting, true, StandardCharsets.UTF_8);

  private String shown() {
    return terminal.toString(StandardCharsets.UTF_8);
  }

  @Test
  void eachLineIsShownRedactedAsSoonAsItEnds() {
    out.println("cp-1  Failed  token: t0k3n-1");
    assertEquals("cp-1  Failed  token: <redacted>\n", shown(), "shown at once: watch streams");
    out.print("cp-2  Upgrading  password: ");
    out.flush();
    assertEquals("cp-1  Failed  token: <redacted>\n", shown(), "half a line waits for its end");
    out.println("hunter2");
    assertEquals("cp-1  Failed  token: <redacted>\ncp-2  Upgrading  password: <redacted>\n", shown());
  }

  @Test
  void aPrivateKeyPrintedLineByLineIsHeldUntilItsEndAndRedactedAsOneBlock() {
    out.println("key of fleet/ssh:");
    out.println("-----BEGIN OPENSSH PRIVATE KEY-----");
    out.println("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ");
    assertEquals("key of fleet/ssh:\n", shown());
    out.println("-----END OPENSSH PRIVATE KEY-----");
    out.println("done");
    assertEquals("key of fleet/ssh:\n-----BEGIN OPENSSH PRIVATE KEY-----<redacted>-----END OPENSSH PRIVATE KEY-----\ndone\n",
        shown());
  }

  @Test
  void whatIsStillHeldWhenTheCommandEndsIsShownRedacted() throws Exception {
    out.println("-----BEGIN PRIVATE KEY-----");
    out.print("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC");
    redacting.close();
    assertEquals("-----BEGIN PRIVATE KEY-----<redacted>-----END PRIVATE KEY-----", shown());
  }
}
