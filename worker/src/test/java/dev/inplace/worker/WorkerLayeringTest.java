package dev.inplace.worker;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The worker's doors stay independent (the Maven enforcer sees modules, not packages): the CR
 * watcher (watch) and the runtime extension (extension) never call each other, and the custom
 * resource model (crd) is a leaf both may read. Shared intake logic belongs in a package both use.
 */
class WorkerLayeringTest {
  private static JavaClasses classes;

  @BeforeAll
  static void importWorker() {
    classes = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.inplace.worker");
  }

  @Test
  void theWatcherDoesNotUseTheExtension() {
    noClasses().that().resideInAPackage("dev.inplace.worker.watch..")
        .should().dependOnClassesThat().resideInAPackage("dev.inplace.worker.extension..")
        .check(classes);
  }

  @Test
  void theExtensionDoesNotUseTheWatcher() {
    noClasses().that().resideInAPackage("dev.inplace.worker.extension..")
        .should().dependOnClassesThat().resideInAPackage("dev.inplace.worker.watch..")
        .check(classes);
  }

  @Test
  void theResourceModelIsALeaf() {
    noClasses().that().resideInAPackage("dev.inplace.worker.crd..")
        .should().dependOnClassesThat().resideInAnyPackage(
            "dev.inplace.worker.watch..", "dev.inplace.worker.extension..", "dev.inplace.activities..")
        .check(classes);
  }

  @Test
  void onlyTheWorkersWiringReachesIntoThePackages() {
    // Sub-packages never depend on the top-level wiring (InplaceWorker, WorkerMain, WorkerConfig).
    noClasses().that().resideInAnyPackage("dev.inplace.worker.watch..", "dev.inplace.worker.extension..",
            "dev.inplace.worker.crd..")
        .should().dependOnClassesThat().haveFullyQualifiedName("dev.inplace.worker.InplaceWorker")
        .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.inplace.worker.WorkerMain")
        .check(classes);
  }
}
