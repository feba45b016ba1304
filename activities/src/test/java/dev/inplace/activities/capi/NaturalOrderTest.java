package dev.inplace.activities.capi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NaturalOrderTest {
  @Test
  void digitRunsCompareByValue() {
    List<String> names =
        new ArrayList<>(List.of("worker-10", "worker-2", "worker-1", "cp-b", "worker-02", "cp-a"));

    names.sort(NaturalOrder.INSTANCE);

    assertEquals(List.of("cp-a", "cp-b", "worker-1", "worker-02", "worker-2", "worker-10"), names);
  }

  @Test
  void numbersLongerThanALongStillCompareByValue() {
    assertEquals(
        -1,
        Integer.signum(
            NaturalOrder.INSTANCE.compare("n-99999999999999999999", "n-100000000000000000000")));
  }

  @Test
  void namesEqualByValueStillHaveAStableOrder() {
    assertNotEquals(0, NaturalOrder.INSTANCE.compare("w-02", "w-2"));
    assertEquals(0, NaturalOrder.INSTANCE.compare("w-2", "w-2"));
    assertEquals(-1, Integer.signum(NaturalOrder.INSTANCE.compare("w", "w-1")));
  }
}
