package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;

/** A ConfigMap key holding the release catalogue JSON (see ReleaseCatalogue). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CatalogueReference {
  public static final String DEFAULT_KEY = "catalogue.json";

  @Required
  @Pattern(UpgradeSpec.NAME_PATTERN)
  @JsonPropertyDescription("ConfigMap in the CR's namespace.")
  private String configMapName;

  @Default(DEFAULT_KEY)
  @Pattern("^[-._a-zA-Z0-9]+$")
  @JsonPropertyDescription("Data key of the catalogue JSON in that ConfigMap.")
  private String key;

  public CatalogueReference() {}

  public CatalogueReference(String configMapName, String key) {
    this.configMapName = configMapName;
    this.key = key;
  }

  public String getConfigMapName() {
    return configMapName;
  }

  public CatalogueReference setConfigMapName(String configMapName) {
    this.configMapName = configMapName;
    return this;
  }

  public String getKey() {
    return key;
  }

  public CatalogueReference setKey(String key) {
    this.key = key;
    return this;
  }

  /** A ConfigMap holding catalogue JSON under {@link #DEFAULT_KEY}, for a reference to name. */
  public static ConfigMap configMap(String namespace, String name, String catalogueJson) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withName(name)
        .endMetadata()
        .addToData(DEFAULT_KEY, catalogueJson)
        .build();
  }

  /** {@code key} with its default. */
  public String key() {
    return key == null || key.isBlank() ? DEFAULT_KEY : key;
  }
}
