package dev.inplace.client;

import com.google.protobuf.ByteString;
import dev.inplace.workflows.failure.CredentialRedactor;
import io.temporal.api.common.v1.Payload;
import io.temporal.api.common.v1.Payloads;
import io.temporal.api.failure.v1.ApplicationFailureInfo;
import io.temporal.api.failure.v1.Failure;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.FailureConverter;
import io.temporal.failure.DefaultFailureConverter;
import io.temporal.payload.context.SerializationContext;
import java.nio.charset.StandardCharsets;

/**
 * Temporal's failure converter with {@link CredentialRedactor} over what it writes: every failure
 * that a worker, a workflow or a client turns into history (an activity's or a workflow's failure,
 * with its causes) carries its message, stack trace and JSON details redacted. The failure type,
 * retry flag and everything else pass unchanged, so workflows branch on failures as before. Reading
 * failures back is Temporal's own conversion.
 */
final class RedactingFailureConverter implements FailureConverter {
  private static final String JSON_ENCODING = "json/plain";

  private final FailureConverter delegate;

  RedactingFailureConverter() {
    this(new DefaultFailureConverter());
  }

  private RedactingFailureConverter(FailureConverter delegate) {
    this.delegate = delegate;
  }

  @Override
  public RuntimeException failureToException(Failure failure, DataConverter dataConverter) {
    return delegate.failureToException(failure, dataConverter);
  }

  @Override
  public Failure exceptionToFailure(Throwable throwable, DataConverter dataConverter) {
    return redact(delegate.exceptionToFailure(throwable, dataConverter));
  }

  @Override
  public FailureConverter withContext(SerializationContext context) {
    return new RedactingFailureConverter(delegate.withContext(context));
  }

  /** {@code failure} with its message, stack trace and JSON details redacted, and so its causes. */
  static Failure redact(Failure failure) {
    Failure.Builder out = failure.toBuilder()
        .setMessage(CredentialRedactor.redact(failure.getMessage()))
        .setStackTrace(CredentialRedactor.redact(failure.getStackTrace()));
    if (failure.hasApplicationFailureInfo() && failure.getApplicationFailureInfo().hasDetails()) {
      ApplicationFailureInfo info = failure.getApplicationFailureInfo();
      out.setApplicationFailureInfo(info.toBuilder().setDetails(redact(info.getDetails())));
    }
    if (failure.hasCause()) {
      out.setCause(redact(failure.getCause()));
    }
    return out.build();
  }

  private static Payloads redact(Payloads payloads) {
    Payloads.Builder out = payloads.toBuilder().clearPayloads();
    for (Payload p : payloads.getPayloadsList()) {
      ByteString encoding = p.getMetadataOrDefault("encoding", ByteString.EMPTY);
      if (encoding.toStringUtf8().equals(JSON_ENCODING)) {
        // The redactor keeps quoted values quoted, so JSON stays JSON.
        String json = p.getData().toString(StandardCharsets.UTF_8);
        p = p.toBuilder().setData(ByteString.copyFrom(CredentialRedactor.redact(json), StandardCharsets.UTF_8)).build();
      }
      out.addPayloads(p);
    }
    return out.build();
  }
}
