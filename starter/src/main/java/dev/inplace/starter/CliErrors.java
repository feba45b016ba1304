package dev.inplace.starter;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/** Maps what went wrong to the documented exit codes (docs/cli.md). */
final class CliErrors {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int USAGE = 2;
  static final int CANNOT_CONNECT = 3;

  private CliErrors() {}

  static int exitCode(Throwable e) {
    if (e instanceof CliException) {
      return USAGE;
    }
    return cannotConnect(e) ? CANNOT_CONNECT : FAILED;
  }

  /** True when the frontend was unreachable: no connection, or no answer in time. */
  static boolean cannotConnect(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof CliContext.CannotConnectException || t instanceof java.net.ConnectException) {
        return true;
      }
      if (t instanceof StatusRuntimeException s) {
        Status.Code code = s.getStatus().getCode();
        if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
          return true;
        }
      }
    }
    return false;
  }

  static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? e.toString() : t.getMessage();
  }
}
