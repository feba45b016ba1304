package dev.inplace.workflows.api;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A WorkersUpgrade window as the operator writes it: a count ({@code "3"}) or a percent of the pool
 * ({@code "25%"}). A percent rounds up and the window is never less than one node. Public so that
 * every door (CLI, custom resources, the run itself) checks one rule.
 */
public record MaxUnavailable(String text, int count, int percent) {
  private static final Pattern COUNT = Pattern.compile("[0-9]{1,6}");
  private static final Pattern PERCENT = Pattern.compile("([0-9]{1,3})%");

  /** The window as written, or an {@link IllegalArgumentException} saying what form it must take. */
  public static MaxUnavailable parse(String text) {
    String value = text == null ? "" : text.trim();
    if (COUNT.matcher(value).matches() && Integer.parseInt(value) >= 1) {
      return new MaxUnavailable(value, Integer.parseInt(value), 0);
    }
    Matcher percent = PERCENT.matcher(value);
    if (percent.matches()) {
      int p = Integer.parseInt(percent.group(1));
      if (p >= 1 && p <= 100) {
        return new MaxUnavailable(value, 0, p);
      }
    }
    throw new IllegalArgumentException(
        "maxUnavailable must be a count of at least 1 (\"3\") or a percent from 1% to 100% (\"25%\"), got '"
            + text + "'");
  }

  /** How many nodes of a pool of {@code poolSize} may be upgraded at once. */
  public int windowFor(int poolSize) {
    if (count > 0) {
      return count;
    }
    return Math.max(1, (percent * poolSize + 99) / 100);
  }
}
