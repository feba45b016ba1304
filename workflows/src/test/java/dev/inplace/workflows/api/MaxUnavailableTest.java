package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class MaxUnavailableTest {

  @ParameterizedTest
  @CsvSource({"1,10,1", "3,10,3", "30,10,30", "25%,10,3", "40%,7,3", "1%,7,1", "100%,7,7", "10%,1000,100", "50%,0,1"})
  void windowIsTheCountOrThePercentRoundedUpAndAtLeastOne(String text, int pool, int window) {
    assertEquals(window, MaxUnavailable.parse(text).windowFor(pool));
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "0%", "101%", "150%", "abc", "", "-1", "2.5", "1000000000"})
  void refusesValuesThatAreNotACountOrAPercent(String text) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MaxUnavailable.parse(text));
    assertTrue(e.getMessage().contains("got '" + text + "'"), e.getMessage());
  }
}
