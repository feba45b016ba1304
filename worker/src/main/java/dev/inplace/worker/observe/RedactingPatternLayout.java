package dev.inplace.worker.observe;

import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.inplace.workflows.failure.CredentialRedactor;

/**
 * The text log format ({@code INPLACE_LOG_FORMAT=text}): logback's pattern layout, with
 * {@link CredentialRedactor} over each finished event (message, MDC values and stack trace alike).
 */
public final class RedactingPatternLayout extends PatternLayout {
  @Override
  public String doLayout(ILoggingEvent event) {
    return CredentialRedactor.redact(super.doLayout(event));
  }
}
