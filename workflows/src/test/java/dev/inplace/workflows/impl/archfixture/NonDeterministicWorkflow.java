package dev.inplace.workflows.impl.archfixture;

import io.temporal.client.WorkflowClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Random;
import java.util.UUID;

/**
 * Test fixture only: a "workflow implementation" that breaks every determinism rule, so
 * WorkflowRulesTest can show the rules report it. It lives in test sources, which the production
 * check does not import, and is never registered with a worker.
 */
public class NonDeterministicWorkflow {
  static int runs;

  public String run(WorkflowClient client) throws Exception {
    runs++;
    long started = System.currentTimeMillis();
    Instant now = Instant.now();
    int dice = new Random().nextInt(6);
    String id = UUID.randomUUID().toString();
    Thread.sleep(1);
    String config = Files.readString(Path.of("/etc/hostname"));
    return client.getOptions().getNamespace() + started + now + dice + id + config;
  }
}
