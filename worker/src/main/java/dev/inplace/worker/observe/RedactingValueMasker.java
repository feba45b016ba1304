package dev.inplace.worker.observe;

import com.fasterxml.jackson.core.JsonStreamContext;
import dev.inplace.workflows.failure.CredentialRedactor;
import net.logstash.logback.mask.ValueMasker;

/**
 * The JSON log format ({@code INPLACE_LOG_FORMAT=json}): {@link CredentialRedactor} over every string
 * value the encoder writes (message, stack_trace, MDC fields, arguments), before JSON escaping, so a
 * PEM block's line breaks and a quoted password are seen as they are.
 */
public final class RedactingValueMasker implements ValueMasker {
  @Override
  public Object mask(JsonStreamContext context, Object value) {
    if (value instanceof CharSequence text) {
      String original = text.toString();
      String redacted = CredentialRedactor.redact(original);
      return redacted.equals(original) ? null : redacted;
    }
    return null;
  }
}
