package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.SearchAttributeRegistration.Mode;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.operatorservice.v1.AddSearchAttributesRequest;
import io.temporal.api.operatorservice.v1.AddSearchAttributesResponse;
import io.temporal.api.operatorservice.v1.ListSearchAttributesRequest;
import io.temporal.api.operatorservice.v1.ListSearchAttributesResponse;
import io.temporal.api.operatorservice.v1.OperatorServiceGrpc;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The check-only mode (Temporal Cloud) against a stand-in operator service served in process: it
 * lists the namespace's attributes as configured, records every add, and may refuse listing.
 */
class SearchAttributeCheckTest {
  private static final String NAMESPACE = "fleet.a1b2c";

  private final Map<String, IndexedValueType> present = new LinkedHashMap<>();
  private final List<AddSearchAttributesRequest> adds = new CopyOnWriteArrayList<>();
  private Status listing = Status.OK;
  private Server server;
  private ManagedChannel channel;
  private WorkflowServiceStubs stubs;

  private WorkflowServiceStubs start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(new OperatorServiceGrpc.OperatorServiceImplBase() {
          @Override
          public void listSearchAttributes(
              ListSearchAttributesRequest request, StreamObserver<ListSearchAttributesResponse> response) {
            if (!listing.isOk()) {
              response.onError(listing.asRuntimeException());
              return;
            }
            response.onNext(ListSearchAttributesResponse.newBuilder()
                .putAllCustomAttributes(request.getNamespace().equals(NAMESPACE) ? present : Map.of()).build());
            response.onCompleted();
          }

          @Override
          public void addSearchAttributes(
              AddSearchAttributesRequest request, StreamObserver<AddSearchAttributesResponse> response) {
            adds.add(request);
            response.onError(Status.PERMISSION_DENIED.withDescription("Request unauthorized.").asRuntimeException());
          }
        })
        .build()
        .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    stubs = WorkflowServiceStubs.newServiceStubs(WorkflowServiceStubsOptions.newBuilder().setChannel(channel).build());
    return stubs;
  }

  @AfterEach
  void stop() {
    if (stubs != null) {
      stubs.shutdownNow();
      channel.shutdownNow();
      server.shutdownNow();
    }
  }

  @Test
  void checkingFindsEveryAttributePresentAndAddsNothing() throws Exception {
    present.putAll(SearchAttributeRegistration.wanted());
    present.put("SomeoneElsesAttribute", IndexedValueType.INDEXED_VALUE_TYPE_INT);
    assertEquals(List.of(), SearchAttributeRegistration.ensure(start(), NAMESPACE, Mode.CHECK));
    assertEquals(List.of(), adds);
  }

  @Test
  void checkingWithAttributesMissingFailsWithOneMessageNamingThemTheirTypesAndTheCommandsAndAddsNothing()
      throws Exception {
    present.putAll(SearchAttributeRegistration.wanted());
    present.remove("InplaceCluster");
    present.remove("InplaceNode");
    WorkflowServiceStubs service = start();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> SearchAttributeRegistration.ensure(service, NAMESPACE, Mode.CHECK));
    String message = e.getMessage();
    assertTrue(message.contains("lacks search attributes InplaceCluster (Keyword), InplaceNode (KeywordList);"), message);
    assertTrue(message.contains("tcld namespace search-attributes add --namespace fleet.a1b2c"
        + " --search-attribute InplaceCluster=Keyword --search-attribute InplaceNode=KeywordList"), message);
    assertTrue(message.contains("temporal operator search-attribute create --namespace fleet.a1b2c --name InplaceCluster"
        + " --type Keyword && temporal operator search-attribute create --namespace fleet.a1b2c --name InplaceNode"
        + " --type KeywordList"), message);
    assertTrue(!message.contains("InplacePhase"), "only the missing ones are listed: " + message);
    assertEquals(List.of(), adds);
  }

  @Test
  void checkingAnAttributeOfTheWrongTypeFailsNamingBothTypes() throws Exception {
    present.putAll(SearchAttributeRegistration.wanted());
    present.put("InplaceNode", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    WorkflowServiceStubs service = start();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> SearchAttributeRegistration.ensure(service, NAMESPACE, Mode.CHECK));
    assertTrue(e.getMessage().contains("InplaceNode is Keyword, not KeywordList"), e.getMessage());
  }

  @Test
  void checkingWhenListingIsRefusedFailsWithTheStatusAndTheCommandsForEveryAttribute() throws Exception {
    listing = Status.PERMISSION_DENIED;
    WorkflowServiceStubs service = start();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> SearchAttributeRegistration.ensure(service, NAMESPACE, Mode.CHECK));
    assertTrue(e.getMessage().contains("cannot list the search attributes of namespace fleet.a1b2c (PERMISSION_DENIED)"),
        e.getMessage());
    for (String name : SearchAttributeRegistration.wanted().keySet()) {
      assertTrue(e.getMessage().contains("--search-attribute " + name + "="), e.getMessage());
    }
  }

  @Test
  void registeringWhereAddingIsRefusedFailsNamingTheMissingAttributesTheCommandsAndTheCheckOnlySetting()
      throws Exception {
    present.putAll(SearchAttributeRegistration.wanted());
    present.remove("InplacePhase");
    WorkflowServiceStubs service = start();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> SearchAttributeRegistration.ensure(service, NAMESPACE, Mode.REGISTER));
    assertTrue(e.getMessage().contains("cannot register search attribute InplacePhase in namespace fleet.a1b2c"
        + " (PERMISSION_DENIED); missing: InplacePhase (Keyword)"), e.getMessage());
    assertTrue(e.getMessage().contains("--search-attribute InplacePhase=Keyword"), e.getMessage());
    assertTrue(e.getMessage().contains(SearchAttributeRegistration.SETTING + "=false"), e.getMessage());
    assertEquals(1, adds.size());
  }

  @Test
  void autoChecksOnTemporalCloudAddressesAndRegistersElsewhere() {
    assertEquals(Mode.CHECK, Mode.fromSetting(null, Optional.of("fleet.a1b2c.tmprl.cloud:7233")));
    assertEquals(Mode.CHECK, Mode.fromSetting("auto", Optional.of("us-east-1.aws.api.temporal.io:7233")));
    assertEquals(Mode.CHECK, Mode.fromSetting(" AUTO ", Optional.of("Fleet.A1B2C.TMPRL.CLOUD:7233")));
    assertEquals(Mode.REGISTER, Mode.fromSetting("", Optional.of("temporal-frontend.temporal:7233")));
    assertEquals(Mode.REGISTER, Mode.fromSetting("auto", Optional.of("tmprl.cloud.example.com:7233")));
    assertEquals(Mode.REGISTER, Mode.fromSetting("auto", Optional.empty()));
  }

  @Test
  void trueAlwaysRegistersFalseAlwaysChecksAndAnythingElseIsRefused() {
    assertEquals(Mode.REGISTER, Mode.fromSetting("true", Optional.of("fleet.a1b2c.tmprl.cloud:7233")));
    assertEquals(Mode.CHECK, Mode.fromSetting("false", Optional.of("temporal-frontend.temporal:7233")));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Mode.fromSetting("yes", Optional.empty()));
    assertEquals(SearchAttributeRegistration.SETTING + " must be auto, true or false, got 'yes'", e.getMessage());
  }
}
