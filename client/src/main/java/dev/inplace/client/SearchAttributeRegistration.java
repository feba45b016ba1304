package dev.inplace.client;

import dev.inplace.workflows.api.RunSearchAttributes;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.operatorservice.v1.AddSearchAttributesRequest;
import io.temporal.api.operatorservice.v1.ListSearchAttributesRequest;
import io.temporal.common.SearchAttributeKey;
import io.temporal.serviceclient.OperatorServiceStubs;
import io.temporal.serviceclient.OperatorServiceStubsOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers inplace's custom search attributes in the namespace at worker start. Upserting an
 * attribute the server does not know would stall a workflow, so a worker that cannot register them
 * (Temporal Cloud: the namespace admin does it) says exactly which ones are missing.
 */
public final class SearchAttributeRegistration {
  private static final Logger log = LoggerFactory.getLogger(SearchAttributeRegistration.class);

  private SearchAttributeRegistration() {}

  public static Map<String, IndexedValueType> wanted() {
    Map<String, IndexedValueType> wanted = new LinkedHashMap<>();
    for (SearchAttributeKey<?> key : RunSearchAttributes.ALL) {
      wanted.put(
          key.getName(),
          key.getValueType() == IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
              ? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
              : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    return wanted;
  }

  /** Adds whatever is missing; returns the names that were added. */
  public static List<String> ensure(WorkflowServiceStubs service, String namespace) {
    OperatorServiceStubs operator =
        OperatorServiceStubs.newServiceStubs(
            OperatorServiceStubsOptions.newBuilder().setChannel(service.getRawChannel()).validateAndBuildWithDefaults());
    try {
      Set<String> existing = existing(operator, namespace);
      Map<String, IndexedValueType> missing = new LinkedHashMap<>(wanted());
      missing.keySet().removeAll(existing);
      // One at a time: a server that cannot list them answers ALREADY_EXISTS per attribute.
      List<String> added = new java.util.ArrayList<>();
      missing.forEach(
          (name, type) -> {
            try {
              operator.blockingStub().addSearchAttributes(
                  AddSearchAttributesRequest.newBuilder().setNamespace(namespace).putSearchAttributes(name, type).build());
              added.add(name);
            } catch (StatusRuntimeException e) {
              if (e.getStatus().getCode() != Status.Code.ALREADY_EXISTS) {
                throw new IllegalStateException(
                    "cannot register search attribute " + name + " in namespace " + namespace + " ("
                        + e.getStatus().getCode() + "); register " + wanted().keySet()
                        + " as Keyword (InplaceNode as KeywordList) and restart the worker", e);
              }
            }
          });
      if (!added.isEmpty()) {
        log.info("registered search attributes {} in namespace {}", added, namespace);
      }
      return List.copyOf(added);
    } finally {
      operator.shutdownNow();
    }
  }

  private static Set<String> existing(OperatorServiceStubs operator, String namespace) {
    try {
      return operator.blockingStub()
          .listSearchAttributes(ListSearchAttributesRequest.newBuilder().setNamespace(namespace).build())
          .getCustomAttributesMap()
          .keySet();
    } catch (StatusRuntimeException e) {
      // The test server does not implement listing; adding then reports what already exists.
      return Set.of();
    }
  }
}
