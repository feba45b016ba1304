package dev.inplace.workflows.arch;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.inplace.workflows.impl.archfixture.NonDeterministicWorkflow;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The module's own classes keep the determinism and layering rules; a violating class is reported. */
class WorkflowRulesTest {
  private static JavaClasses production;

  @BeforeAll
  static void importProductionClasses() {
    production = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.inplace.workflows");
    assertFalse(production.isEmpty());
  }

  @Test
  void workflowImplementationsAreDeterministic() {
    WorkflowRules.DETERMINISM.check(production);
  }

  @Test
  void packagesKeepTheirDirection() {
    WorkflowRules.LAYERING.check(production);
  }

  @Test
  void aWorkflowReadingTheClockOrDoingIoIsReported() {
    JavaClasses fixture = new ClassFileImporter().importClasses(NonDeterministicWorkflow.class);
    EvaluationResult result = WorkflowRules.DETERMINISM.evaluate(fixture);
    assertTrue(result.hasViolation());
    String report = String.join("\n", result.getFailureReport().getDetails());
    for (String expected : List.of("Instant.now()", "System.currentTimeMillis()", "java.util.Random",
        "UUID.randomUUID()", "java.lang.Thread", "java.nio.file.Files", "io.temporal.client.WorkflowClient",
        "NonDeterministicWorkflow.runs")) {
      assertTrue(report.contains(expected), "not reported: " + expected + "\n" + report);
    }
  }
}
