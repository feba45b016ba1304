package dev.inplace.workflows.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What the build enforces inside the workflows module that Maven's enforcer cannot see: workflow
 * implementations stay deterministic (Temporal replays them), and the packages keep their direction
 * (api and the catalogues below the implementations, client code out of workflow code).
 */
public final class WorkflowRules {
  /** Workflow implementation packages: code Temporal replays. */
  public static final String IMPLEMENTATION = "dev.inplace.workflows.impl..";

  private WorkflowRules() {}

  /** No file, channel or socket I/O: a replay would repeat it, or see something else. */
  public static final ArchRule NO_IO =
      noClasses().that().resideInAPackage(IMPLEMENTATION)
          .should().dependOnClassesThat().resideInAnyPackage("java.io..", "java.nio..", "java.net..")
          .because("workflow code is replayed; I/O belongs in activities");

  /** No clock but Workflow.currentTimeMillis / Workflow.sleep. */
  public static final ArchRule NO_SYSTEM_TIME =
      noClasses().that().resideInAPackage(IMPLEMENTATION)
          .should().callMethod(System.class, "currentTimeMillis")
          .orShould().callMethod(System.class, "nanoTime")
          .orShould().callMethodWhere(staticNowOfJavaTime())
          .orShould().dependOnClassesThat().areAssignableTo(Clock.class)
          .because("a replay must see the time the history recorded: use Workflow.currentTimeMillis()");

  /** No randomness but Workflow.newRandom / Workflow.randomUUID. */
  public static final ArchRule NO_RANDOMNESS =
      noClasses().that().resideInAPackage(IMPLEMENTATION)
          .should().dependOnClassesThat().areAssignableTo(Random.class)
          .orShould().dependOnClassesThat().areAssignableTo(SecureRandom.class)
          .orShould().dependOnClassesThat().areAssignableTo(ThreadLocalRandom.class)
          .orShould().callMethod(UUID.class, "randomUUID")
          .orShould().callMethod(Math.class, "random")
          .because("a replay must draw the same values: use Workflow.newRandom() or Workflow.randomUUID()");

  /** No threads or executors but Async / Workflow.newTimer. */
  public static final ArchRule NO_THREADS =
      noClasses().that().resideInAPackage(IMPLEMENTATION)
          .should().dependOnClassesThat().areAssignableTo(Thread.class)
          .orShould().dependOnClassesThat().areAssignableTo(ExecutorService.class)
          .orShould().dependOnClassesThat().areAssignableTo(Executors.class)
          .because("workflow threads are Temporal's: use Async and Workflow.await");

  /**
   * No Temporal client: workflow code starts children and activities through Workflow.*. The one
   * exception is the failure type Temporal hands a parent whose child ID is taken; the SDK declares
   * it in the client package.
   */
  public static final ArchRule NO_TEMPORAL_CLIENT =
      noClasses().that().resideInAPackage(IMPLEMENTATION)
          .should().dependOnClassesThat(
              DescribedPredicate.describe("are in io.temporal.client (except WorkflowExecutionAlreadyStarted)",
                  (JavaClass c) -> c.getPackageName().startsWith("io.temporal.client")
                      && !c.isEquivalentTo(WorkflowExecutionAlreadyStarted.class)))
          .because("workflow code talks to Temporal only through Workflow.*");

  /** No mutable static state: several runs share a worker's classes, and a replay starts fresh. */
  public static final ArchRule NO_MUTABLE_STATIC_STATE =
      fields().that().areDeclaredInClassesThat().resideInAPackage(IMPLEMENTATION)
          .and().areStatic()
          .should().beFinal()
          .andShould().notHaveRawType(java.util.ArrayList.class)
          .andShould().notHaveRawType(java.util.HashMap.class)
          .andShould().notHaveRawType(java.util.LinkedHashMap.class)
          .andShould().notHaveRawType(java.util.HashSet.class)
          .andShould().notHaveRawType(java.util.LinkedHashSet.class)
          .andShould().notHaveRawType(java.util.concurrent.ConcurrentHashMap.class)
          .andShould().notHaveRawType(java.util.concurrent.atomic.AtomicInteger.class)
          .andShould().notHaveRawType(java.util.concurrent.atomic.AtomicLong.class)
          .andShould().notHaveRawType(java.util.concurrent.atomic.AtomicReference.class)
          .because("state shared between workflow runs breaks determinism");

  public static final ArchRule DETERMINISM =
      CompositeArchRule.of(NO_IO).and(NO_SYSTEM_TIME).and(NO_RANDOMNESS).and(NO_THREADS)
          .and(NO_TEMPORAL_CLIENT).and(NO_MUTABLE_STATIC_STATE);

  // ---- layering inside the module ---------------------------------------------------------------

  /** The API (records, interfaces) is what clients and activities see: it knows no implementation. */
  public static final ArchRule API_BELOW_IMPLEMENTATION =
      noClasses().that().resideInAPackage("dev.inplace.workflows.api..")
          .should().dependOnClassesThat().resideInAnyPackage(
              "dev.inplace.workflows.impl..", "dev.inplace.workflows.client..", "dev.inplace.workflows.options..");

  /** The failure vocabulary and the activity options catalogue sit below the implementations. */
  public static final ArchRule CATALOGUES_BELOW_IMPLEMENTATION =
      noClasses().that().resideInAnyPackage("dev.inplace.workflows.failure..", "dev.inplace.workflows.options..")
          .should().dependOnClassesThat().resideInAnyPackage(
              "dev.inplace.workflows.impl..", "dev.inplace.workflows.client..");

  /** The failure vocabulary is the bottom: everything may use it, it uses nothing of ours. */
  public static final ArchRule FAILURES_AT_THE_BOTTOM =
      noClasses().that().resideInAPackage("dev.inplace.workflows.failure..")
          .should().dependOnClassesThat().resideInAnyPackage(
              "dev.inplace.workflows.api..", "dev.inplace.workflows.options..");

  public static final ArchRule LAYERING =
      CompositeArchRule.of(API_BELOW_IMPLEMENTATION).and(CATALOGUES_BELOW_IMPLEMENTATION).and(FAILURES_AT_THE_BOTTOM);

  /** Instant.now, LocalDateTime.now, ZonedDateTime.now, ... in any overload. */
  private static DescribedPredicate<JavaMethodCall> staticNowOfJavaTime() {
    return DescribedPredicate.describe("a java.time now()",
        call -> call.getTarget().getName().equals("now")
            && call.getTarget().getOwner().getPackageName().equals("java.time"));
  }
}
