package dev.inplace.client;

import dev.inplace.workflows.api.RunSearchAttributes;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.operatorservice.v1.AddSearchAttributesRequest;
import io.temporal.api.operatorservice.v1.ListSearchAttributesRequest;
import io.temporal.common.SearchAttributeKey;
import io.temporal.serviceclient.GrpcMetadataProvider;
import io.temporal.serviceclient.OperatorServiceStubs;
import io.temporal.serviceclient.OperatorServiceStubsOptions;
import io.temporal.serviceclient.ServiceStubsOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure inplace's custom search attributes exist in the namespace at worker start. Upserting an
 * attribute the server does not know would stall a workflow, so a worker that finds them missing and
 * may not add them (Temporal Cloud: the account's own tools add them) refuses to start and says
 * exactly which ones are missing and the command that adds them.
 *
 * <p>Every call goes through {@link #operatorStubs}: the operator service on the same channel as the
 * workflow service, with the same API key and headers, plus the namespace header.
 */
public final class SearchAttributeRegistration {
  private static final Logger log = LoggerFactory.getLogger(SearchAttributeRegistration.class);

  /** {@code auto} (default), {@code true} or {@code false}: see {@link Mode}. */
  public static final String SETTING = "INPLACE_TEMPORAL_REGISTER_SEARCH_ATTRIBUTES";

  /** The header the SDK's workflow client sends with every call (Temporal Cloud routes by it). */
  static final Metadata.Key<String> NAMESPACE_HEADER =
      Metadata.Key.of("temporal-namespace", Metadata.ASCII_STRING_MARSHALLER);

  /** What the worker does with the attributes at start. */
  public enum Mode {
    /** Adds the missing ones through the operator service (self-hosted Temporal). */
    REGISTER,
    /** Only lists them; any missing one stops the start with the command that adds it (Temporal Cloud). */
    CHECK;

    /**
     * Reads {@link SearchAttributeRegistration#SETTING}: {@code true} registers, {@code false} checks, {@code auto} (or unset)
     * checks when {@code address} is Temporal Cloud's ({@link #isTemporalCloud}) and registers otherwise.
     */
    public static Mode fromSetting(String value, Optional<String> address) {
      String v = value == null || value.isBlank() ? "auto" : value.trim().toLowerCase(Locale.ROOT);
      switch (v) {
        case "true":
          return REGISTER;
        case "false":
          return CHECK;
        case "auto":
          return address.filter(SearchAttributeRegistration::isTemporalCloud).isPresent() ? CHECK : REGISTER;
        default:
          throw new IllegalArgumentException(SETTING + " must be auto, true or false, got '" + value.trim() + "'");
      }
    }
  }

  private SearchAttributeRegistration() {}

  /**
   * Whether {@code address} ({@code host:port}) is a Temporal Cloud endpoint: a namespace endpoint
   * {@code *.tmprl.cloud} or a regional API-key endpoint {@code *.api.temporal.io}.
   */
  public static boolean isTemporalCloud(String address) {
    String host = address.trim().toLowerCase(Locale.ROOT);
    int colon = host.lastIndexOf(':');
    if (colon > 0 && !host.endsWith("]")) {
      host = host.substring(0, colon);
    }
    return host.endsWith(".tmprl.cloud") || host.endsWith(".api.temporal.io");
  }

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

  /**
   * Operator service stubs on {@code service}'s channel, sending what its calls send: the API key
   * and any other metadata providers, headers and interceptors of its options, and the
   * {@code temporal-namespace} header. (Stubs on the bare raw channel would send none of them, and a
   * frontend that wants an API key refuses them.) Shut them down after use; the channel stays open.
   */
  public static OperatorServiceStubs operatorStubs(WorkflowServiceStubs service, String namespace) {
    ServiceStubsOptions options = service.getOptions();
    List<GrpcMetadataProvider> providers = new ArrayList<>();
    if (options.getGrpcMetadataProviders() != null) {
      providers.addAll(options.getGrpcMetadataProviders()); // the API key (envconfig adds it as one)
    }
    Metadata namespaceHeader = new Metadata();
    namespaceHeader.put(NAMESPACE_HEADER, namespace);
    providers.add(() -> namespaceHeader);
    OperatorServiceStubsOptions.Builder operator =
        OperatorServiceStubsOptions.newBuilder().setChannel(service.getRawChannel()).setGrpcMetadataProviders(providers);
    if (options.getHeaders() != null) {
      operator.setHeaders(options.getHeaders());
    }
    if (options.getGrpcClientInterceptors() != null) {
      operator.setGrpcClientInterceptors(options.getGrpcClientInterceptors());
    }
    if (options.getMetricsScope() != null) {
      operator.setMetricsScope(options.getMetricsScope());
    }
    if (options.getRpcTimeout() != null) {
      operator.setRpcTimeout(options.getRpcTimeout());
    }
    return OperatorServiceStubs.newServiceStubs(operator.validateAndBuildWithDefaults());
  }

  /** Adds whatever is missing; returns the names that were added. */
  public static List<String> ensure(WorkflowServiceStubs service, String namespace) {
    return ensure(service, namespace, Mode.REGISTER);
  }

  /**
   * Registers the missing attributes ({@link Mode#REGISTER}) or only checks that they exist
   * ({@link Mode#CHECK}); returns the names added. Throws {@link IllegalStateException} with one
   * message naming every missing attribute, its type and the commands that add them when they are
   * missing and cannot (or may not) be added.
   */
  public static List<String> ensure(WorkflowServiceStubs service, String namespace, Mode mode) {
    OperatorServiceStubs operator = operatorStubs(service, namespace);
    try {
      return mode == Mode.CHECK ? check(operator, namespace) : register(operator, namespace);
    } finally {
      operator.shutdownNow();
    }
  }

  private static List<String> check(OperatorServiceStubs operator, String namespace) {
    Map<String, IndexedValueType> existing;
    try {
      existing = operator.blockingStub()
          .listSearchAttributes(ListSearchAttributesRequest.newBuilder().setNamespace(namespace).build())
          .getCustomAttributesMap();
    } catch (StatusRuntimeException e) {
      throw new IllegalStateException("cannot list the search attributes of namespace " + namespace + " ("
          + e.getStatus().getCode() + "); " + SETTING + "=false (or auto on Temporal Cloud) only checks them, so the"
          + " worker does not start. " + instructions(namespace, wanted()), e);
    }
    Map<String, IndexedValueType> missing = new LinkedHashMap<>();
    List<String> wrongType = new ArrayList<>();
    wanted().forEach(
        (name, type) -> {
          IndexedValueType found = existing.get(name);
          if (found == null) {
            missing.put(name, type);
          } else if (found != type) {
            wrongType.add(name + " is " + typeName(found) + ", not " + typeName(type));
          }
        });
    if (!wrongType.isEmpty()) {
      throw new IllegalStateException("namespace " + namespace + " has inplace's search attributes with the wrong type: "
          + String.join(", ", wrongType) + "; a search attribute's type cannot change: use a namespace without them");
    }
    if (!missing.isEmpty()) {
      throw new IllegalStateException("namespace " + namespace + " lacks search attributes " + describe(missing)
          + "; the worker only checks them (" + SETTING + "=false, or auto on Temporal Cloud) and does not start. "
          + instructions(namespace, missing));
    }
    log.info("search attributes {} are present in namespace {}", wanted().keySet(), namespace);
    return List.of();
  }

  private static List<String> register(OperatorServiceStubs operator, String namespace) {
    Map<String, IndexedValueType> missing = new LinkedHashMap<>(wanted());
    missing.keySet().removeAll(existing(operator, namespace));
    // One at a time: a server that cannot list them answers ALREADY_EXISTS per attribute.
    List<String> added = new ArrayList<>();
    missing.forEach(
        (name, type) -> {
          try {
            operator.blockingStub().addSearchAttributes(
                AddSearchAttributesRequest.newBuilder().setNamespace(namespace).putSearchAttributes(name, type).build());
            added.add(name);
          } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.ALREADY_EXISTS) {
              Map<String, IndexedValueType> left = new LinkedHashMap<>(missing);
              left.keySet().removeAll(added);
              throw new IllegalStateException(
                  "cannot register search attribute " + name + " in namespace " + namespace + " ("
                      + e.getStatus().getCode() + "); missing: " + describe(left) + ". " + instructions(namespace, left)
                      + " On Temporal Cloud, set " + SETTING + "=false (auto does when the address is *.tmprl.cloud"
                      + " or *.api.temporal.io) so the worker only checks them.", e);
            }
          }
        });
    if (!added.isEmpty()) {
      log.info("registered search attributes {} in namespace {}", added, namespace);
    }
    return List.copyOf(added);
  }

  private static java.util.Set<String> existing(OperatorServiceStubs operator, String namespace) {
    try {
      return operator.blockingStub()
          .listSearchAttributes(ListSearchAttributesRequest.newBuilder().setNamespace(namespace).build())
          .getCustomAttributesMap()
          .keySet();
    } catch (StatusRuntimeException e) {
      // The test server does not implement listing; adding then reports what already exists.
      return java.util.Set.of();
    }
  }

  private static String describe(Map<String, IndexedValueType> attributes) {
    List<String> parts = new ArrayList<>();
    attributes.forEach((name, type) -> parts.add(name + " (" + typeName(type) + ")"));
    return String.join(", ", parts);
  }

  /** The commands that add {@code attributes}: tcld for Temporal Cloud, the temporal CLI elsewhere. */
  static String instructions(String namespace, Map<String, IndexedValueType> attributes) {
    StringBuilder tcld = new StringBuilder("tcld namespace search-attributes add --namespace " + namespace);
    StringBuilder temporal = new StringBuilder();
    attributes.forEach(
        (name, type) -> {
          tcld.append(" --search-attribute ").append(name).append('=').append(typeName(type));
          temporal.append(temporal.length() == 0 ? "" : " && ")
              .append("temporal operator search-attribute create --namespace ").append(namespace)
              .append(" --name ").append(name).append(" --type ").append(typeName(type));
        });
    return "Add them, then restart the worker. Temporal Cloud (or its UI: Namespace > Custom Search Attributes): "
        + tcld + " ; self-hosted Temporal: " + temporal;
  }

  /** The name the temporal CLI and tcld use for a type: Keyword, KeywordList, ... */
  static String typeName(IndexedValueType type) {
    switch (type) {
      case INDEXED_VALUE_TYPE_KEYWORD:
        return "Keyword";
      case INDEXED_VALUE_TYPE_KEYWORD_LIST:
        return "KeywordList";
      case INDEXED_VALUE_TYPE_TEXT:
        return "Text";
      case INDEXED_VALUE_TYPE_INT:
        return "Int";
      case INDEXED_VALUE_TYPE_DOUBLE:
        return "Double";
      case INDEXED_VALUE_TYPE_BOOL:
        return "Bool";
      case INDEXED_VALUE_TYPE_DATETIME:
        return "Datetime";
      default:
        return type.name();
    }
  }
}
