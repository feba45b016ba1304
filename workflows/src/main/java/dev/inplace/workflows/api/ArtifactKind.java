package dev.inplace.workflows.api;

/** What an artifact is, which decides how it is installed and whether it is backed up. */
public enum ArtifactKind {
  /** An executable swapped atomically into place; the previous one is kept for rollback. */
  BINARY,
  /** An air-gap image archive dropped into the images directory for the runtime to import. */
  IMAGE_ARCHIVE,
  /**
   * An OS image carrying kernel and Kubernetes, written by {@code kairos-agent upgrade} on Kairos
   * hosts ({@link HostOs#KAIROS}): from a registry ({@code oci:REPO@sha256:DIGEST}, pulled by the
   * host) or from an archive the worker stages (air-gapped sites).
   */
  OS_IMAGE
}
