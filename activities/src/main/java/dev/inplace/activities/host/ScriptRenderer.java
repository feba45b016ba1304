package dev.inplace.activities.host;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.UpgradeStep;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Renders the shell templates under {@code scripts/<folder>/} on the classpath, falling back to
 * {@code scripts/common/} for the steps every distribution shares. A line {@code # inplace-include:
 * NAME} is replaced by the fragment {@code scripts/lib/NAME.sh} (shared shell functions and blocks),
 * and a line {@code # inplace-hook: NAME} by the distribution's own {@code
 * scripts/<folder>/hooks/NAME.sh} when it has one, else by {@code scripts/lib/NAME.sh} (the default):
 * the rendered script is self-contained and the golden files show it whole. Each {@code
 * {{name}}} becomes its value in single quotes, so no value can change the script's meaning (the
 * request records validate them too). A placeholder without a value, or a value the template does
 * not use, is a programming error and fails the rendering. Right after its header every script gets
 * {@code journal_script='<name>'} and the journal fragment ({@code scripts/lib/journal.sh}), so each
 * one journals its begin, its end and its destructive actions on the host; a template marked
 * {@code # inplace-read-only} (the host inspection) writes nothing at all, journal included, so a plan
 * changes no byte on any host. Before the journal, every script gets the pulse fragment ({@code
 * scripts/lib/pulse.sh}): a newline on stderr every 2 s while it runs, its sign of life.
 */
final class ScriptRenderer {
  private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{([a-z_]+)}}");
  private static final Pattern INCLUDE = Pattern.compile("# inplace-(include|hook): ([a-z0-9-]+)");
  private static final Pattern STEP_MARKER = Pattern.compile("# inplace-step: ([a-z]+)");
  private static final String SHEBANG = "#!/bin/bash";
  private static final String HEADER_TAIL = "set -eu\nroot=\"${INPLACE_HOST_ROOT:-}\"\n";

  /** Marks a template that changes nothing on the host: it gets no journal (see {@link #withJournal}). */
  static final String READ_ONLY_MARKER = "# inplace-read-only";

  /** The fragment every script starts with after its header (see {@link #withJournal}). */
  static final String JOURNAL_FRAGMENT = "journal";

  /**
   * The sign-of-life fragment every script starts with, read-only ones too (it writes only to the
   * script's own stderr): the worker cuts a script that falls silent (see {@link #withJournal}).
   */
  static final String PULSE_FRAGMENT = "pulse";

  /** Templates of the steps every distribution runs the same way. */
  static final String COMMON_FOLDER = "common";

  /** Fragments a template includes; they carry no header and include nothing themselves. */
  static final String LIB_FOLDER = "lib";

  private final List<String> folders;
  private final Map<String, String> templates = new ConcurrentHashMap<>();

  ScriptRenderer(String folder) {
    this(List.of(folder));
  }

  /**
   * Templates and hooks from the first of {@code folders} that has them (a host OS profile before
   * the distribution: {@code kairos}, then {@code k0s}), then {@code common} and {@code lib}.
   */
  ScriptRenderer(List<String> folders) {
    this.folders = List.copyOf(folders);
  }

  RemoteScript render(String name, ScriptValues values) {
    String template = templates.computeIfAbsent(name, this::load);
    String step = stepOf(name, template);
    Set<String> used = new HashSet<>();
    StringBuilder out = new StringBuilder(template.length() + 256);
    for (String line : template.split("\n", -1)) {
      renderLine(name, line, values, used, out);
    }
    out.setLength(out.length() - 1); // split kept the text after the last newline as a line
    Set<String> unused = new HashSet<>(values.scalars().keySet());
    unused.addAll(values.rows().keySet());
    unused.removeAll(used);
    if (!unused.isEmpty()) {
      throw new IllegalArgumentException(
          "template " + name + " has no placeholder for " + unused.stream().sorted().toList());
    }
    return new RemoteScript(name, step, out.toString());
  }

  private static void renderLine(
      String template, String line, ScriptValues values, Set<String> used, StringBuilder out) {
    Matcher m = PLACEHOLDER.matcher(line);
    String rowsName = null;
    List<String> names = new ArrayList<>();
    while (m.find()) {
      String name = m.group(1);
      names.add(name);
      if (values.rows().containsKey(name)) {
        if (rowsName != null) {
          throw new IllegalArgumentException(
              "template " + template + ": two row lists on one line: " + line);
        }
        rowsName = name;
      } else if (!values.scalars().containsKey(name)) {
        throw new IllegalArgumentException(
            "template " + template + ": no value for placeholder {{" + name + "}}");
      }
    }
    used.addAll(names);
    if (rowsName == null) {
      out.append(substitute(line, values, null)).append('\n');
      return;
    }
    for (List<String> row : values.rows().get(rowsName)) {
      String fields = row.stream().map(ScriptRenderer::quote).collect(Collectors.joining(" "));
      out.append(substitute(line, values, Map.entry(rowsName, fields))).append('\n');
    }
  }

  private static String substitute(
      String line, ScriptValues values, Map.Entry<String, String> rowFields) {
    Matcher m = PLACEHOLDER.matcher(line);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      String name = m.group(1);
      String replacement =
          rowFields != null && rowFields.getKey().equals(name)
              ? rowFields.getValue()
              : quote(values.scalars().get(name));
      m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  /** Single-quotes a value for bash; control characters are refused outright. */
  static String quote(String value) {
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw new IllegalArgumentException("script value contains a control character");
      }
    }
    return "'" + value.replace("'", "'\\''") + "'";
  }

  /** Checks the fixed header every script starts with and returns the step of its marker. */
  private static String stepOf(String name, String template) {
    String[] lines = template.split("\n", 3);
    Matcher marker = lines.length == 3 ? STEP_MARKER.matcher(lines[1]) : null;
    if (marker == null
        || !lines[0].equals(SHEBANG)
        || !marker.matches()
        || !lines[2].startsWith(HEADER_TAIL)) {
      throw new IllegalStateException(
          "template " + name + " does not start with the inplace script header");
    }
    return UpgradeStep.fromCliName(marker.group(1)).cliName();
  }

  private String load(String name) {
    List<String> candidates = new ArrayList<>();
    folders.forEach(f -> candidates.add("scripts/" + f + "/" + name + ".sh"));
    candidates.add("scripts/" + COMMON_FOLDER + "/" + name + ".sh");
    for (String candidate : candidates) {
      String text = read(candidate);
      if (text != null) {
        return expandIncludes(candidate, withJournal(name, text));
      }
    }
    throw new IllegalArgumentException("no script template " + String.join(" or ", candidates) + " on the classpath");
  }

  /**
   * Every script pulses (scripts/lib/pulse.sh) and journals itself (scripts/lib/journal.sh: begin,
   * end, destructive actions): right after the header, the pulse, then the script's name and the
   * journal fragment. A read-only template pulses only. A template without the header is left as
   * it is; rendering refuses it.
   */
  private static String withJournal(String name, String text) {
    int header = text.indexOf('\n' + HEADER_TAIL);
    if (header < 0) {
      return text;
    }
    int body = header + 1 + HEADER_TAIL.length();
    String pulse = "# inplace-include: " + PULSE_FRAGMENT + "\n";
    if (text.contains('\n' + READ_ONLY_MARKER + '\n')) {
      return text.substring(0, body) + pulse + text.substring(body);
    }
    return text.substring(0, body)
        + pulse
        + "journal_script="
        + quote(name)
        + "\n# inplace-include: "
        + JOURNAL_FRAGMENT
        + "\n"
        + text.substring(body);
  }

  /** Replaces each include or hook line by its fragment; a fragment must not include another. */
  private String expandIncludes(String template, String text) {
    StringBuilder out = new StringBuilder(text.length() + 1024);
    for (String line : text.split("\n", -1)) {
      Matcher include = INCLUDE.matcher(line);
      if (!include.matches()) {
        out.append(line).append('\n');
        continue;
      }
      String fragmentPath = "scripts/" + LIB_FOLDER + "/" + include.group(2) + ".sh";
      String fragment = null;
      if (include.group(1).equals("hook")) {
        for (String folder : folders) {
          String own = "scripts/" + folder + "/hooks/" + include.group(2) + ".sh";
          fragment = read(own);
          if (fragment != null) {
            fragmentPath = own;
            break;
          }
        }
      }
      fragment = fragment == null ? read(fragmentPath) : fragment;
      if (fragment == null) {
        throw new IllegalArgumentException(template + " includes " + fragmentPath + ", which is not on the classpath");
      }
      if (INCLUDE.matcher(fragment).find() || fragment.startsWith(SHEBANG)) {
        throw new IllegalStateException(fragmentPath + " must be a plain fragment: no header, no includes");
      }
      if (!fragment.endsWith("\n")) {
        throw new IllegalStateException(fragmentPath + " must end with a newline");
      }
      out.append(fragment);
    }
    out.setLength(out.length() - 1); // split kept the text after the last newline as a line
    return out.toString();
  }

  private static String read(String resource) {
    try (InputStream in = ScriptRenderer.class.getClassLoader().getResourceAsStream(resource)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script template " + resource, e);
    }
  }
}
