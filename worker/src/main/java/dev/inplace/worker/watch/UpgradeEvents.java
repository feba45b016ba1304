package dev.inplace.worker.watch;

import dev.inplace.workflows.failure.CredentialRedactor;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records core/v1 Events on a CR, as {@code kubectl describe} shows them, messages with credentials
 * redacted. A failure to record is only logged.
 */
final class UpgradeEvents {
  static final String COMPONENT = "inplace-watcher";
  private static final Logger log = LoggerFactory.getLogger(UpgradeEvents.class);
  private static final int MAX_MESSAGE = 1024;

  private final KubernetesClient client;
  private final String instance;
  private final SecureRandom random = new SecureRandom();

  UpgradeEvents(KubernetesClient client, String instance) {
    this.client = client;
    this.instance = instance;
  }

  void record(HasMetadata cr, EventDiff.Event event) {
    String now = Texts.time(Instant.now());
    byte[] suffix = new byte[8];
    random.nextBytes(suffix);
    String message = event.message() == null ? "" : CredentialRedactor.redact(event.message());
    Event e =
        new EventBuilder()
            .withNewMetadata()
            .withName(cr.getMetadata().getName() + "." + HexFormat.of().formatHex(suffix))
            .withNamespace(cr.getMetadata().getNamespace())
            .endMetadata()
            .withNewInvolvedObject()
            .withApiVersion(cr.getApiVersion())
            .withKind(cr.getKind())
            .withName(cr.getMetadata().getName())
            .withNamespace(cr.getMetadata().getNamespace())
            .withUid(cr.getMetadata().getUid())
            .endInvolvedObject()
            .withType(event.type())
            .withReason(event.reason())
            .withMessage(message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE - 3) + "..." : message)
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withCount(1)
            .withNewSource()
            .withComponent(COMPONENT)
            .endSource()
            .withReportingComponent(COMPONENT)
            .withReportingInstance(instance)
            .build();
    try {
      client.v1().events().inNamespace(cr.getMetadata().getNamespace()).resource(e).create();
    } catch (KubernetesClientException ex) {
      log.warn("cannot record event {} on {} {}/{}: HTTP {}", event.reason(), cr.getKind(),
          cr.getMetadata().getNamespace(), cr.getMetadata().getName(), ex.getCode());
    }
  }
}
