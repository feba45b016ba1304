package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Option value types: picocli names the option in front of each message. */
final class Converters {
  private Converters() {}

  /** {@code NAMESPACE/NAME}. */
  static final class Cluster implements ITypeConverter<ClusterRef> {
    @Override
    public ClusterRef convert(String text) {
      String[] parts = text.split("/", -1);
      if (parts.length != 2) {
        throw new TypeConversionException("needs NAMESPACE/NAME, got '" + text + "'");
      }
      try {
        return new ClusterRef(parts[0], parts[1]);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /**
   * A positional {@code NS/NAME} argument (describe, history), with the message naming it; an
   * invalid namespace or name is a usage error too.
   */
  static ClusterRef clusterArgument(picocli.CommandLine commandLine, String text) {
    String[] ref = text.split("/", -1);
    try {
      if (ref.length == 2 && !ref[0].isBlank() && !ref[1].isBlank()) {
        return new ClusterRef(ref[0], ref[1]);
      }
    } catch (IllegalArgumentException invalid) {
      throw new picocli.CommandLine.ParameterException(commandLine, "NS/NAME: " + invalid.getMessage());
    }
    throw new picocli.CommandLine.ParameterException(commandLine, "NS/NAME must be namespace/name, got '" + text + "'");
  }

  /** A distribution by its lower-case name; every {@link Distribution} is accepted. */
  static final class DistributionName implements ITypeConverter<Distribution> {
    @Override
    public Distribution convert(String text) {
      for (Distribution d : Distribution.values()) {
        if (d.name().equalsIgnoreCase(text)) {
          return d;
        }
      }
      throw new TypeConversionException("'" + text + "' is not one of " + String.join(", ", new Distributions()));
    }
  }

  /** Completion candidates and help text for {@code --distribution}. */
  static final class Distributions implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return Arrays.stream(Distribution.values()).map(d -> d.name().toLowerCase(Locale.ROOT)).iterator();
    }
  }

  /** A duration in whole seconds: {@code 300}, {@code 300s}, {@code 5m} or {@code 1h}. */
  static final class Seconds implements ITypeConverter<Long> {
    private static final Pattern FORM = Pattern.compile("(\\d{1,9})([smh]?)");

    @Override
    public Long convert(String text) {
      Matcher m = FORM.matcher(text.trim());
      if (!m.matches()) {
        throw new TypeConversionException("needs seconds (300) or a duration (300s, 5m, 1h), got '" + text + "'");
      }
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "m" -> n * 60;
        case "h" -> n * 3600;
        default -> n;
      };
    }
  }

  /** A whole number >= 0. */
  static final class Count implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String text) {
      try {
        int n = Integer.parseInt(text.trim());
        if (n >= 0) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new TypeConversionException("needs a whole number >= 0, got '" + text + "'");
    }
  }
}
