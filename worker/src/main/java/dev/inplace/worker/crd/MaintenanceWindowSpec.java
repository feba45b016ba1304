package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import java.util.List;

/** When new nodes may start (MaintenanceWindow). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class MaintenanceWindowSpec {
  static final String TIME_PATTERN = "^([01][0-9]|2[0-3]):[0-5][0-9]$";

  @JsonPropertyDescription("Days the window opens on: MON..SUN (empty: every day).")
  private List<@Pattern("^(MON|TUE|WED|THU|FRI|SAT|SUN|Mon|Tue|Wed|Thu|Fri|Sat|Sun)$") String> days;

  @Required
  @Pattern(TIME_PATTERN)
  @JsonPropertyDescription("Opening time, HH:mm.")
  private String start;

  @Required
  @Pattern(TIME_PATTERN)
  @JsonPropertyDescription("Closing time, HH:mm; before start means the window crosses midnight.")
  private String end;

  @Default("UTC")
  @JsonPropertyDescription("IANA time zone of start and end, e.g. Europe/Berlin.")
  private String timeZone;

  public List<String> getDays() {
    return days;
  }

  public MaintenanceWindowSpec setDays(List<String> days) {
    this.days = days;
    return this;
  }

  public String getStart() {
    return start;
  }

  public MaintenanceWindowSpec setStart(String start) {
    this.start = start;
    return this;
  }

  public String getEnd() {
    return end;
  }

  public MaintenanceWindowSpec setEnd(String end) {
    this.end = end;
    return this;
  }

  public String getTimeZone() {
    return timeZone;
  }

  public MaintenanceWindowSpec setTimeZone(String timeZone) {
    this.timeZone = timeZone;
    return this;
  }
}
