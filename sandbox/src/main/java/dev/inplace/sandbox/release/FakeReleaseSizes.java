package dev.inplace.sandbox.release;

/**
 * How big the fake artifacts are. Real k3s binaries are about 60-70 MiB and image archives
 * hundreds; the defaults are smaller so an estate starts quickly yet transfers still take
 * measurable time.
 *
 * @param binaryBytes total size of the fake {@code k3s} binary (script plus padding)
 * @param imagePaddingBytes size of the padding entry inside the air-gap image archive
 */
public record FakeReleaseSizes(long binaryBytes, long imagePaddingBytes) {
  private static final long MIB = 1024L * 1024L;

  public FakeReleaseSizes {
    if (binaryBytes < 0 || imagePaddingBytes < 0) {
      throw new IllegalArgumentException("artifact sizes must be >= 0");
    }
  }

  /** 32 MiB binary, 4 MiB of image padding: the demo and benchmarks. */
  public static FakeReleaseSizes defaults() {
    return new FakeReleaseSizes(32 * MIB, 4 * MIB);
  }

  /** 64 KiB binary, 16 KiB of image padding: fast tests. */
  public static FakeReleaseSizes small() {
    return new FakeReleaseSizes(64 * 1024L, 16 * 1024L);
  }
}
