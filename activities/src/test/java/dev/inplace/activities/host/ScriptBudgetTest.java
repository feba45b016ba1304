package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inplace.workflows.options.ActivityOptionsCatalog;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ScriptBudgetTest {
  private static final Duration FALLBACK = Duration.ofMinutes(2);

  @Test
  void kubeadmUpgradeScriptGetsItsActivitysQuarterHourNotTwoMinutes() {
    Duration startToClose = ActivityOptionsCatalog.distributionUpgrade().getStartToCloseTimeout();

    assertEquals(
        Duration.ofMinutes(24), HostActivitiesImpl.scriptBudget(startToClose, FALLBACK));
  }

  @Test
  void shortStepsKeepATenthAsMarginForTheirOwnFailureReport() {
    Duration startToClose = ActivityOptionsCatalog.hostStep().getStartToCloseTimeout();

    assertEquals(
        Duration.ofMinutes(3).minusSeconds(18),
        HostActivitiesImpl.scriptBudget(startToClose, FALLBACK));
    assertEquals(
        Duration.ofSeconds(5), HostActivitiesImpl.scriptBudget(Duration.ofSeconds(10), FALLBACK));
    assertEquals(
        Duration.ofSeconds(3), HostActivitiesImpl.scriptBudget(Duration.ofSeconds(6), FALLBACK));
  }

  @Test
  void withoutAnActivityBudgetTheConnectorDefaultApplies() {
    assertEquals(FALLBACK, HostActivitiesImpl.scriptBudget(null, FALLBACK));
    assertEquals(FALLBACK, HostActivitiesImpl.scriptBudget(Duration.ZERO, FALLBACK));
  }
}
