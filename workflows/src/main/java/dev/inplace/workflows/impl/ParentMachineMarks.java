package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.workflow.Workflow;

/**
 * How a parent run sets and removes its Machines' skip-remediation marks, decided once per run from
 * the versions it recorded: with a regular or a local activity per mark, with or without its
 * workflow ID as the mark's owner, or in batches ({@link MachineMarkBatches}).
 */
final class ParentMachineMarks {
  /**
   * Change ID: runs from this version on mark Machines (skip-remediation) with a local activity, so
   * no task-queue round trip sits between one node finishing and the next starting. Older runs
   * (recorded before commit dc55ad3 introduced it unversioned) mark with a regular activity.
   */
  static final String LOCAL_MACHINE_MARKS_CHANGE = "parent-local-machine-marks";

  /**
   * Change ID: runs from this version on write their workflow ID as the mark's value and remove only
   * a mark with that value, so a mark an operator set before the run survives it. Older runs wrote
   * an empty value and removed any mark.
   */
  static final String MACHINE_MARK_OWNER_CHANGE = "parent-machine-mark-owner";

  /**
   * Change ID: runs from this version on set and remove their Machines' marks in batches ({@link
   * MachineMarkBatches}): one {@code markMachines} activity for the marks asked together, not one
   * {@code markMachineUpgrading} local activity per Machine. Older runs mark one Machine per local
   * activity.
   */
  static final String BATCHED_MACHINE_MARKS_CHANGE = "parent-batched-machine-marks";

  private final ClusterApiActivities localMachineMarks =
      Workflow.newLocalActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.machineMark());
  private final ClusterApiActivities clusterApi;
  /** Marks one Machine per call: a local activity, or the regular {@link #clusterApi} for older runs. */
  private ClusterApiActivities oneByOne;
  /** Batches the marks instead ({@link #BATCHED_MACHINE_MARKS_CHANGE}); null for older runs. */
  private MachineMarkBatches batches;
  /** The value of this run's marks (its workflow ID), or null for runs from before owners. */
  private String owner;
  private String namespace;

  ParentMachineMarks(ClusterApiActivities clusterApi) {
    this.clusterApi = clusterApi;
  }

  /** Decides how this run marks; called once per run, before anything else is recorded. */
  void begin(String namespace) {
    this.namespace = namespace;
    oneByOne = Workflow.getVersion(LOCAL_MACHINE_MARKS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
        ? localMachineMarks
        : clusterApi;
    owner = Workflow.getVersion(MACHINE_MARK_OWNER_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
        ? Workflow.getInfo().getWorkflowId()
        : null;
    batches = oneByOne == localMachineMarks
            && Workflow.getVersion(BATCHED_MACHINE_MARKS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
        ? new MachineMarkBatches()
        : null;
  }

  /** Whether this run marks in batches, which go on whatever the run's cancellation. */
  boolean batched() {
    return batches != null;
  }

  /**
   * Sets ({@code upgrading}) or removes the Machine's mark; throws an {@code ActivityFailure}, or in
   * a batch a Machine's own failure as an {@code ApplicationFailure}.
   */
  void set(MachineInfo machine, boolean upgrading) {
    MachineMarkRequest request = new MachineMarkRequest(namespace, machine.name(), upgrading, owner);
    if (batches != null) {
      batches.set(request);
    } else {
      oneByOne.markMachineUpgrading(request);
    }
  }
}
