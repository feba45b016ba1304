package dev.inplace.worker.watch;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;

/** The watcher's status and Event writers, for tests outside its package. */
public final class StatusDoor {
  private StatusDoor() {}

  /**
   * Refuses {@code cr} with {@code message} as the watcher does (status message and conditions
   * through {@link StatusWriter}, the Events the change is worth through {@link UpgradeEvents}), and
   * records one more Warning Event carrying {@code message} as given.
   */
  public static void refuse(KubernetesClient client, ControlPlaneUpgrade cr, String reason, String message) {
    StatusBuilder builder = new StatusBuilder(1, Texts.time(Instant.now()), cr.getSpec().getVersion());
    StatusWriter.Written written = new StatusWriter(client)
        .writeStatusFrom(cr, previous -> builder.refused(previous, new SpecRefusal(reason, message)));
    UpgradeEvents events = new UpgradeEvents(client, "redaction-test");
    for (EventDiff.Event e : EventDiff.between(written.before(), written.after())) {
      events.record(cr, e);
    }
    events.record(cr, new EventDiff.Event(EventDiff.WARNING, reason, message));
  }
}
