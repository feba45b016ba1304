package dev.inplace.starter;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.function.Consumer;

/**
 * The {@code --output} of a read command: a table for people, JSON or YAML of the same record for
 * scripts. The records are the workflows' own API types, so scripts see the same field names as
 * the Temporal payloads.
 */
enum Output {
  // Lower case: picocli shows and completes the constants as written.
  table,
  json,
  yaml;

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final ObjectMapper JSON_LINE = new ObjectMapper();
  /** Long strings stay on one line: a message is redacted (and grepped) whole, not folded mid-credential. */
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER).disable(YAMLGenerator.Feature.SPLIT_LINES));

  /** Prints {@code value}: as a table with {@code table}, otherwise serialised. */
  <T> void print(PrintStream out, T value, Consumer<T> tableWriter) {
    try {
      switch (this) {
        case table -> tableWriter.accept(value);
        case json -> out.println(JSON.writeValueAsString(value));
        case yaml -> out.print(YAML.writeValueAsString(value));
      }
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One value of a stream (watch): a JSON line, a YAML document, or the table. */
  <T> void printNext(PrintStream out, T value, Consumer<T> tableWriter) {
    try {
      switch (this) {
        case table -> tableWriter.accept(value);
        case json -> out.println(JSON_LINE.writeValueAsString(value));
        case yaml -> out.print("---\n" + YAML.writeValueAsString(value));
      }
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
