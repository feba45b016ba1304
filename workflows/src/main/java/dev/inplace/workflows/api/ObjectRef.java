package dev.inplace.workflows.api;

/** A namespaced object in the management cluster, by API group, kind and name. */
public record ObjectRef(String apiGroup, String kind, String name) {}
