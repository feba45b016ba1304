package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/** One node of a plan. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PlannedNode {
  @JsonPropertyDescription("1-based start order.")
  private int order;

  @JsonPropertyDescription("1-based wave: with maxUnavailable N, nodes of a wave run at once.")
  private int wave;

  private String machine;
  private String node;
  private String role;
  private String pool;

  @JsonPropertyDescription("The version the node runs now, as its Machine reports it.")
  private String currentVersion;

  @JsonPropertyDescription("Upgrade, or AlreadyAtTarget (nothing to do).")
  private String action;

  private List<PlannedStep> steps = new ArrayList<>();

  public int getOrder() {
    return order;
  }

  public PlannedNode setOrder(int order) {
    this.order = order;
    return this;
  }

  public int getWave() {
    return wave;
  }

  public PlannedNode setWave(int wave) {
    this.wave = wave;
    return this;
  }

  public String getMachine() {
    return machine;
  }

  public PlannedNode setMachine(String machine) {
    this.machine = machine;
    return this;
  }

  public String getNode() {
    return node;
  }

  public PlannedNode setNode(String node) {
    this.node = node;
    return this;
  }

  public String getRole() {
    return role;
  }

  public PlannedNode setRole(String role) {
    this.role = role;
    return this;
  }

  public String getPool() {
    return pool;
  }

  public PlannedNode setPool(String pool) {
    this.pool = pool;
    return this;
  }

  public String getCurrentVersion() {
    return currentVersion;
  }

  public PlannedNode setCurrentVersion(String currentVersion) {
    this.currentVersion = currentVersion;
    return this;
  }

  public String getAction() {
    return action;
  }

  public PlannedNode setAction(String action) {
    this.action = action;
    return this;
  }

  public List<PlannedStep> getSteps() {
    return steps;
  }

  public PlannedNode setSteps(List<PlannedStep> steps) {
    this.steps = steps;
    return this;
  }
}
