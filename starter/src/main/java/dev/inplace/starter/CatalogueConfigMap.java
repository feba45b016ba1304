package dev.inplace.starter;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.ReleaseCatalogue;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A release merged into the catalogue ConfigMap: the existing catalogue (if any) is parsed by the
 * worker's own parser, the release of the same version, distribution, architecture and host OS is
 * added or, with {@code replace}, replaced, and the JSON is written back under the same key. Other
 * keys of the ConfigMap are kept. Pure: reading and writing the cluster is the caller's.
 */
final class CatalogueConfigMap {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** What a merge did to the catalogue. */
  enum Change { CREATED, ADDED, REPLACED, UNCHANGED }

  /** The ConfigMap to write ({@code resourceVersion} of the one read kept, for a conflict-checked update). */
  record Merged(ConfigMap configMap, Change change) {}

  private CatalogueConfigMap() {}

  static Merged merge(ConfigMap existing, String namespace, String name, String key,
      ReleaseCatalogue.Release release, boolean replace) {
    String what = "ConfigMap " + namespace + "/" + name;
    Map<String, String> data = existing == null || existing.getData() == null
        ? new LinkedHashMap<>() : new LinkedHashMap<>(existing.getData());
    List<ReleaseCatalogue.Release> releases = new ArrayList<>();
    Change change = existing == null ? Change.CREATED : Change.ADDED;
    if (data.containsKey(key)) {
      ReleaseCatalogue current;
      try {
        current = ReleaseCatalogue.parse(data.get(key), what + " key " + key);
      } catch (IllegalArgumentException e) {
        throw new CommandRefused(e.getMessage() + "; fix or remove that key first (the worker refuses it as it is)");
      }
      Optional<ReleaseCatalogue.Release> same = current.releases().stream().filter(r -> sameSlot(r, release)).findFirst();
      if (same.isPresent() && same.get().equals(release)) {
        change = Change.UNCHANGED;
      } else if (same.isPresent() && !replace) {
        throw new CommandRefused(what + " already has a different " + label(release) + " release (other digests or sources);"
            + " pass --replace to replace it");
      } else if (same.isPresent()) {
        change = Change.REPLACED;
      }
      current.releases().stream().filter(r -> !sameSlot(r, release)).forEach(releases::add);
    }
    releases.add(release);
    releases.sort(Comparator.comparing((ReleaseCatalogue.Release r) -> r.distribution())
        .thenComparing(ReleaseCatalogue.Release::os).thenComparing(ReleaseCatalogue.Release::arch)
        .thenComparing(r -> KubeVersion.parse(r.version())));
    data.put(key, json(releases));
    ConfigMapBuilder builder = existing == null
        ? new ConfigMapBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata()
        : new ConfigMapBuilder(existing);
    return new Merged(builder.withData(data).build(), change);
  }

  /** {@code K3S amd64 v1.31.2+k3s1}, with {@code (kairos)} for Kairos hosts. */
  static String label(ReleaseCatalogue.Release r) {
    return r.distribution() + " " + r.arch() + " " + r.version() + (r.os() == HostOs.STANDARD ? "" : " (" + r.os().cliName() + ")");
  }

  private static boolean sameSlot(ReleaseCatalogue.Release a, ReleaseCatalogue.Release b) {
    return a.version().equals(b.version()) && a.distribution() == b.distribution() && a.arch().equals(b.arch())
        && a.os() == b.os();
  }

  /** The catalogue JSON in the documented field order; {@code os} only for non-standard hosts. */
  static String json(List<ReleaseCatalogue.Release> releases) {
    List<Map<String, Object>> list = new ArrayList<>();
    for (ReleaseCatalogue.Release r : releases) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("version", r.version());
      entry.put("distribution", r.distribution().name());
      entry.put("arch", r.arch());
      if (r.os() != HostOs.STANDARD) {
        entry.put("os", r.os().name());
      }
      List<Map<String, Object>> artifacts = new ArrayList<>();
      for (Artifact a : r.artifacts()) {
        Map<String, Object> artifact = new LinkedHashMap<>();
        artifact.put("name", a.name());
        artifact.put("kind", a.kind().name());
        artifact.put("source", a.source());
        artifact.put("sha256", a.sha256());
        artifact.put("sizeBytes", a.sizeBytes());
        artifact.put("installPath", a.installPath());
        artifact.put("mode", a.mode());
        artifacts.add(artifact);
      }
      entry.put("artifacts", artifacts);
      list.add(entry);
    }
    try {
      return JSON.writeValueAsString(Map.of("releases", list)) + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
