package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.RunSearchAttributes;
import io.temporal.common.SearchAttributeKey;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import java.util.List;
import org.junit.jupiter.api.Test;

class SearchAttributeRegistrationTest {

  @Test
  void registersEveryInplaceAttributeOnceAndThenFindsThemAllPresent() {
    TestServer.InProcessTestServer server = TestServer.createServer(true);
    WorkflowServiceStubs stubs =
        WorkflowServiceStubs.newServiceStubs(
            WorkflowServiceStubsOptions.newBuilder().setChannel(server.getChannel()).build());
    try (TemporalConnection temporal = TemporalConnection.over(stubs, "default", server)) {
      List<String> added = SearchAttributeRegistration.ensure(temporal.service(), "default");
      assertEquals(List.copyOf(SearchAttributeRegistration.wanted().keySet()), added);
      // Registering again finds them all present: nothing left to add.
      assertEquals(List.of(), SearchAttributeRegistration.ensure(temporal.service(), "default"));
    }
  }

  @Test
  void everyAttributeIsAKeywordOrKeywordList() {
    for (SearchAttributeKey<?> key : RunSearchAttributes.ALL) {
      assertTrue(SearchAttributeRegistration.wanted().containsKey(key.getName()), key.getName());
    }
  }
}
