package dev.inplace.activities.ssh;

import io.temporal.activity.Activity;
import io.temporal.activity.ActivityInfo;

/**
 * Who runs a remote script, for the host's journal (scripts/lib/journal.sh): the workflow ID and run
 * ID of the activity and its attempt. Nothing secret. {@link #preamble} is the line sent on stdin
 * before the script; characters outside a safe set become {@code _}, so a journal line stays one
 * line of space-separated {@code key=value} fields.
 *
 * @param workflowId the activity's workflow ID, or {@code none} outside an activity
 * @param runId the activity's workflow run ID, or {@code none}
 * @param attempt the activity's attempt (1 for the first), or 0 outside an activity
 */
public record JournalContext(String workflowId, String runId, int attempt) {
  /** Outside an activity (tests, tools): what the journal then records. */
  public static final JournalContext NONE = new JournalContext("none", "none", 0);

  public JournalContext {
    workflowId = safe(workflowId);
    runId = safe(runId);
  }

  /** The context of the activity running on this thread, or {@link #NONE} outside one. */
  public static JournalContext current() {
    ActivityInfo info;
    try {
      info = Activity.getExecutionContext().getInfo();
    } catch (IllegalStateException e) {
      return NONE; // not called from an activity
    }
    return new JournalContext(info.getWorkflowId(), info.getRunId(), info.getAttempt());
  }

  /** The shell line that hands the context to the script's journal. */
  public String preamble() {
    return "INPLACE_JOURNAL_WORKFLOW='"
        + workflowId
        + "' INPLACE_JOURNAL_RUN='"
        + runId
        + "' INPLACE_JOURNAL_ATTEMPT='"
        + attempt
        + "'\n";
  }

  private static String safe(String value) {
    if (value == null || value.isEmpty()) {
      return "none";
    }
    StringBuilder out = new StringBuilder(value.length());
    for (int i = 0; i < value.length() && i < 200; i++) {
      char c = value.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || ".-_:@/+".indexOf(c) >= 0;
      out.append(ok ? c : '_');
    }
    return out.toString();
  }
}
