package dev.inplace.activities.artifacts;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/** Passes at most {@code limit} bytes on; one more throws {@link TooLarge}, so a download cannot fill the disk. */
final class BoundedOutputStream extends FilterOutputStream {
  /** More bytes than allowed arrived. */
  static final class TooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super("too large", null);
    }
  }

  private final long limit;
  private long written;

  BoundedOutputStream(OutputStream out, long limit) {
    super(out);
    this.limit = limit;
  }

  @Override
  public void write(int b) throws IOException {
    count(1);
    out.write(b);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    count(len);
    out.write(b, off, len);
  }

  private void count(long n) throws TooLarge {
    written += n;
    if (written > limit) {
      throw new TooLarge();
    }
  }
}
