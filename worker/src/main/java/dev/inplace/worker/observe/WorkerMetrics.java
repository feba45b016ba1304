package dev.inplace.worker.observe;

import com.uber.m3.tally.RootScopeBuilder;
import com.uber.m3.tally.Scope;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.temporal.common.reporter.MicrometerClientStatsReporter;
import java.time.Duration;

/**
 * The worker's metrics: one Prometheus registry that carries the Temporal SDK's own metrics (through
 * a tally scope reporting into it; set on the service stubs, so the worker factory's pollers and
 * the workflow metrics scope report there too) and inplace's, all scraped from {@code /metrics}.
 */
public final class WorkerMetrics implements AutoCloseable {
  /** How often tally hands its buffered values to the registry. */
  static final Duration REPORT_EVERY = Duration.ofSeconds(1);

  private final PrometheusMeterRegistry registry;
  private final Scope scope;

  public WorkerMetrics() {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // inplace's timers as Prometheus histograms (buckets), not summaries.
    registry.config().meterFilter(new MeterFilter() {
      @Override
      public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
        if (id.getName().startsWith("inplace_") && id.getType() == Meter.Type.TIMER) {
          return DistributionStatisticConfig.builder()
              .percentilesHistogram(true)
              .minimumExpectedValue((double) Duration.ofMillis(10).toNanos())
              .maximumExpectedValue((double) Duration.ofHours(2).toNanos())
              .build()
              .merge(config);
        }
        return config;
      }
    });
    scope =
        new RootScopeBuilder()
            .reporter(new MicrometerClientStatsReporter(registry))
            .reportEvery(com.uber.m3.util.Duration.ofMillis(REPORT_EVERY.toMillis()));
  }

  /** The SDK's metrics scope: give it to the service stubs (TemporalConnection.connect). */
  public Scope scope() {
    return scope;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition of everything registered. */
  public String scrape() {
    return registry.scrape();
  }

  @Override
  public void close() {
    try {
      scope.close();
    } catch (Exception e) {
      // closing flushes; nothing to do if it cannot
    }
    registry.close();
  }
}
