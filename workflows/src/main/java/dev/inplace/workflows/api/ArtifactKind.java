package dev.inplace.workflows.api;

/** What an artifact is, which decides how it is installed and whether it is backed up. */
public enum ArtifactKind {
  /** An executable swapped atomically into place; the previous one is kept for rollback. */
  BINARY,
  /** An air-gap image archive dropped into the images directory for the runtime to import. */
  IMAGE_ARCHIVE
}
