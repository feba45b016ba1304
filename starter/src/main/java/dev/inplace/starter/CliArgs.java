package dev.inplace.starter;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Positional arguments and {@code --flag value} options, parsed strictly against known flags. */
final class CliArgs {
  final List<String> positional = new ArrayList<>();
  private final Map<String, String> options = new LinkedHashMap<>();

  static CliArgs parse(List<String> args, Set<String> flags) {
    CliArgs parsed = new CliArgs();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.startsWith("--")) {
        if (!flags.contains(a)) {
          throw new CliException("unknown option '" + a + "'" + (flags.isEmpty() ? "" : "; known: " + String.join(" ", flags)));
        }
        if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
          throw new CliException(a + " needs a value");
        }
        parsed.options.put(a, args.get(++i));
      } else {
        parsed.positional.add(a);
      }
    }
    return parsed;
  }

  String required(String flag) {
    String v = options.get(flag);
    if (v == null || v.isBlank()) {
      throw new CliException(flag + " is required");
    }
    return v;
  }

  String optional(String flag, String fallback) {
    return options.getOrDefault(flag, fallback);
  }

  long number(String flag, long fallback) {
    String v = options.get(flag);
    if (v == null) {
      return fallback;
    }
    try {
      long n = Long.parseLong(v);
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new CliException(flag + " needs a whole number >= 0, got '" + v + "'");
    }
  }

  String positional(int index, String what) {
    if (positional.size() <= index) {
      throw new CliException("missing " + what);
    }
    return positional.get(index);
  }
}
