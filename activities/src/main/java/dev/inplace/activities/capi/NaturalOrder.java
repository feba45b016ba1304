package dev.inplace.activities.capi;

import java.util.Comparator;

/**
 * Orders names as people read them: runs of digits compare by their numeric value, so {@code
 * worker-2} comes before {@code worker-10}. Names equal under that rule fall back to plain string
 * order, so the order is total and stable.
 */
final class NaturalOrder implements Comparator<String> {
  static final NaturalOrder INSTANCE = new NaturalOrder();

  private NaturalOrder() {}

  @Override
  public int compare(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      char ca = a.charAt(i);
      char cb = b.charAt(j);
      if (isDigit(ca) && isDigit(cb)) {
        int endA = digitsEnd(a, i);
        int endB = digitsEnd(b, j);
        int byValue = compareDigits(a.substring(i, endA), b.substring(j, endB));
        if (byValue != 0) {
          return byValue;
        }
        i = endA;
        j = endB;
      } else {
        if (ca != cb) {
          return Character.compare(ca, cb);
        }
        i++;
        j++;
      }
    }
    int byLength = Integer.compare(a.length() - i, b.length() - j);
    return byLength != 0 ? byLength : a.compareTo(b);
  }

  /** Compares two digit runs by value, without parsing (they may be longer than a long). */
  private static int compareDigits(String x, String y) {
    String a = stripLeadingZeros(x);
    String b = stripLeadingZeros(y);
    if (a.length() != b.length()) {
      return Integer.compare(a.length(), b.length());
    }
    return a.compareTo(b);
  }

  private static String stripLeadingZeros(String digits) {
    int k = 0;
    while (k < digits.length() - 1 && digits.charAt(k) == '0') {
      k++;
    }
    return digits.substring(k);
  }

  private static int digitsEnd(String s, int start) {
    int k = start;
    while (k < s.length() && isDigit(s.charAt(k))) {
      k++;
    }
    return k;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
