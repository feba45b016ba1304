package dev.inplace.workflows.api;

import io.temporal.common.SearchAttributeKey;
import java.util.List;

/**
 * The custom search attributes that make inplace runs findable in the Temporal UI and CLI, e.g. {@code
 * temporal workflow list --query 'InplaceCluster="fleet/edge-1" AND InplacePhase="HALTED"'}. The
 * worker registers them at start; upserting an unregistered one would stall a workflow.
 */
public final class RunSearchAttributes {
  public static final SearchAttributeKey<String> CLUSTER = SearchAttributeKey.forKeyword("InplaceCluster");
  public static final SearchAttributeKey<String> KIND = SearchAttributeKey.forKeyword("InplaceKind");
  public static final SearchAttributeKey<String> TARGET_VERSION =
      SearchAttributeKey.forKeyword("InplaceTargetVersion");
  public static final SearchAttributeKey<List<String>> NODE = SearchAttributeKey.forKeywordList("InplaceNode");
  public static final SearchAttributeKey<String> PHASE = SearchAttributeKey.forKeyword("InplacePhase");

  public static final List<SearchAttributeKey<?>> ALL = List.of(CLUSTER, KIND, TARGET_VERSION, NODE, PHASE);

  public static final String KIND_CONTROL_PLANE = "ControlPlaneUpgrade";
  public static final String KIND_WORKERS = "WorkersUpgrade";
  public static final String KIND_NODE = "NodeUpgrade";

  private RunSearchAttributes() {}
}
