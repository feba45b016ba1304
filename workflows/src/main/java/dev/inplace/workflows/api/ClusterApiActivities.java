package dev.inplace.workflows.api;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Reads and patches CAPI objects (v1beta2) in the management cluster. */
@ActivityInterface
public interface ClusterApiActivities {

  /** Sets {@code Machine.spec.version}; a no-op when it already has that value. */
  @ActivityMethod
  MachineVersionResult recordMachineVersion(MachineVersionRequest request);

  record MachineVersionRequest(String namespace, String machineName, String version) {}

  record MachineVersionResult(String previousVersion, boolean changed) {}
}
