package dev.inplace.workflows.impl;

import io.temporal.common.SearchAttributeUpdate;
import io.temporal.common.SearchAttributes;
import io.temporal.workflow.Workflow;
import java.util.List;
import java.util.Objects;

/**
 * The search-attribute updates that would change the run's attributes: those whose value differs
 * from what the run carries now (set at its start, or by an earlier upsert). An upsert that changes
 * nothing is still one billable action on Temporal Cloud. Deterministic: the run's attributes are
 * its start event's and its own upserts', the same on replay.
 */
final class SearchAttributeChanges {
  private SearchAttributeChanges() {}

  static List<SearchAttributeUpdate<?>> of(List<? extends SearchAttributeUpdate<?>> updates) {
    SearchAttributes current = Workflow.getTypedSearchAttributes();
    return updates.stream()
        .filter(u -> !Objects.equals(current.get(u.getKey()), u.getValue().orElse(null)))
        .<SearchAttributeUpdate<?>>map(u -> u)
        .toList();
  }
}
