package dev.inplace.worker.observe;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import org.junit.jupiter.api.Test;

/**
 * The levels of the shipped logback.xml, which the worker and the CLI (same jar) both use: fabric8's
 * notice about alpha/beta API versions, printed on stderr for CAPI's v1beta2 and our v1alpha1 CRs by
 * every {@code inplace describe cluster} and {@code inplace history}, is kept out; fabric8's other
 * warnings are not.
 */
class ShippedLogLevelsTest {
  @Test
  void fabric8sUnstableVersionNoticeIsSilencedButItsOtherWarningsAreKept() throws Exception {
    LoggerContext context = new LoggerContext();
    try {
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      configurator.doConfigure(ShippedLogLevelsTest.class.getClassLoader().getResource("logback.xml"));

      assertFalse(context.getLogger("io.fabric8.kubernetes.client.dsl.internal.VersionUsageUtils").isWarnEnabled());
      assertTrue(context.getLogger("io.fabric8.kubernetes.client.dsl.internal.OperationSupport").isWarnEnabled());
      assertTrue(context.getLogger("dev.inplace.worker.watch.Reconciler").isWarnEnabled());
    } finally {
      context.stop();
    }
  }
}
