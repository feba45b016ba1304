package dev.inplace.sandbox.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.ReleaseCatalogue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalogue's JSON Schemas (docs/schema) against the worker's parser and catalogue rules: the
 * examples of docs/catalogue.md and the sandbox's own catalogues are valid, and each bad catalogue of
 * a list is refused by both the schema and the parser.
 */
class CatalogueSchemaTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

  @TempDir Path dir;

  /** The schema for releases of {@code distribution} on hosts of {@code os}. */
  private static Schema schema(Distribution distribution, HostOs os) throws Exception {
    String name = os == HostOs.KAIROS ? "kairos" : distribution.name().toLowerCase(Locale.ROOT);
    return REGISTRY.getSchema(JSON.readTree(CatalogueDocs.SCHEMAS.resolve("catalogue-" + name + ".schema.json").toFile()));
  }

  /** What the worker says of a catalogue without its settings: the parser, then the rules on every release. */
  private static Optional<String> parserProblem(String json) {
    ReleaseCatalogue catalogue;
    try {
      catalogue = ReleaseCatalogue.parse(json, "test");
    } catch (IllegalArgumentException e) {
      return Optional.of(e.getMessage());
    }
    for (ReleaseCatalogue.Release r : catalogue.releases()) {
      Optional<String> problem = ArtifactRules.problem(r.artifacts(), r.distribution(), r.os());
      if (problem.isPresent()) {
        return problem;
      }
    }
    return Optional.empty();
  }

  /** Each release alone, validated against its distribution's (or Kairos') schema. */
  private static void assertValid(String json, String what) throws Exception {
    for (JsonNode release : JSON.readTree(json).path("releases")) {
      ObjectNode alone = JSON.createObjectNode();
      alone.putArray("releases").add(release);
      HostOs os = HostOs.parse(release.path("os").asText(""));
      List<Error> errors = schema(Distribution.valueOf(release.path("distribution").asText()), os).validate(alone);
      assertEquals(List.of(), errors.stream().map(Error::toString).toList(), what + " " + release.path("version"));
    }
    assertEquals(Optional.empty(), parserProblem(json), what);
  }

  @Test
  void theSchemasAcceptEveryExampleOfTheDocs() throws Exception {
    List<String> examples = CatalogueDocs.examples();
    assertTrue(examples.size() >= 4, "examples: " + examples.size());
    for (String example : examples) {
      assertValid(example, "docs/catalogue.md example");
    }
  }

  @Test
  void theSchemasAcceptTheSandboxsOwnCataloguesOfEveryDistributionAndKairos() throws Exception {
    for (Distribution d : Distribution.values()) {
      for (HostOs os : HostOs.values()) {
        FakeReleases releases = new FakeReleases(dir.resolve(d + "-" + os), FakeReleaseSizes.small(), d, os);
        String suffix = switch (d) {
          case K3S -> "+k3s1";
          case KUBEADM -> "";
          case K0S -> "+k0s.0";
        };
        releases.add("v1.30.4" + suffix);
        releases.add("v1.31.2" + suffix);
        String json = Files.readString(releases.writeCatalogue());
        assertEquals(2, JSON.readTree(json).path("releases").size());
        assertValid(json, "sandbox " + d + " " + os);
      }
    }
  }

  /** A bad catalogue: made from a good one by {@code change}, for the schema of {@code distribution} and {@code os}. */
  private record Bad(String what, Distribution distribution, HostOs os, Consumer<ObjectNode> change) {}

  private static ObjectNode release(ObjectNode catalogue) {
    return (ObjectNode) catalogue.path("releases").get(0);
  }

  private static ObjectNode artifact(ObjectNode catalogue, int i) {
    return (ObjectNode) release(catalogue).path("artifacts").get(i);
  }

  private static List<Bad> badCatalogues() {
    Distribution k3s = Distribution.K3S;
    HostOs std = HostOs.STANDARD;
    List<Bad> bad = new ArrayList<>();
    bad.add(new Bad("an unknown top-level field", k3s, std, c -> c.put("release", "x")));
    bad.add(new Bad("an unknown release field (misspelt arch)", k3s, std, c -> release(c).put("arhc", "amd64")));
    bad.add(new Bad("an unknown artifact field", k3s, std, c -> artifact(c, 0).put("owner", "root")));
    bad.add(new Bad("no version", k3s, std, c -> release(c).remove("version")));
    bad.add(new Bad("a malformed version", k3s, std, c -> release(c).put("version", "1.31")));
    bad.add(new Bad("no distribution", k3s, std, c -> release(c).remove("distribution")));
    bad.add(new Bad("an unknown distribution", k3s, std, c -> release(c).put("distribution", "RKE2")));
    bad.add(new Bad("a distribution in lower case", k3s, std, c -> release(c).put("distribution", "k3s")));
    bad.add(new Bad("an unknown os", k3s, std, c -> release(c).put("os", "WINDOWS")));
    bad.add(new Bad("no artifacts", k3s, std, c -> release(c).putArray("artifacts")));
    bad.add(new Bad("an artifact name in upper case", k3s, std, c -> artifact(c, 0).put("name", "K3s")));
    bad.add(new Bad("an unknown kind", k3s, std, c -> artifact(c, 0).put("kind", "SCRIPT")));
    bad.add(new Bad("an OS image on a standard host", k3s, std, c -> artifact(c, 0).put("kind", "OS_IMAGE")));
    bad.add(new Bad("a plain http source", k3s, std, c -> artifact(c, 0).put("source", "http://github.com/k3s")));
    bad.add(new Bad("an ftp source", k3s, std, c -> artifact(c, 0).put("source", "ftp://mirror.example/k3s")));
    bad.add(new Bad("a relative source", k3s, std, c -> artifact(c, 0).put("source", "mirror/k3s")));
    bad.add(new Bad("an oci source on a standard host", k3s, std, c -> artifact(c, 0).put("source",
        "oci:quay.io/k3s@sha256:" + artifact(c, 0).path("sha256").asText())));
    bad.add(new Bad("no sha256", k3s, std, c -> artifact(c, 0).remove("sha256")));
    bad.add(new Bad("a short sha256", k3s, std, c -> artifact(c, 0).put("sha256", "ab".repeat(31) + "a")));
    bad.add(new Bad("a sha256 that is not hex", k3s, std, c -> artifact(c, 0).put("sha256", "zz".repeat(32))));
    bad.add(new Bad("a negative size", k3s, std, c -> artifact(c, 0).put("sizeBytes", -1)));
    bad.add(new Bad("a binary installed as /etc/sudoers", k3s, std, c -> artifact(c, 0).put("installPath", "/etc/sudoers")));
    bad.add(new Bad("a binary under another name", k3s, std, c -> artifact(c, 0).put("installPath", "/usr/local/bin/kubectl")));
    bad.add(new Bad("a binary path with ..", k3s, std, c -> artifact(c, 0).put("installPath", "/usr/local/bin/../bin/k3s")));
    bad.add(new Bad("a relative install path", k3s, std, c -> artifact(c, 0).put("installPath", "k3s")));
    bad.add(new Bad("an image archive among the binaries", k3s, std, c -> artifact(c, 1).put("installPath", "/usr/local/bin/images.tar")));
    bad.add(new Bad("an image archive that is no tar", k3s, std, c -> artifact(c, 1).put("installPath",
        "/var/lib/rancher/k3s/agent/images/images.zip")));
    bad.add(new Bad("a setuid mode", k3s, std, c -> artifact(c, 0).put("mode", "4755")));
    bad.add(new Bad("a symbolic mode", k3s, std, c -> artifact(c, 0).put("mode", "rwxr-xr-x")));
    bad.add(new Bad("no mode", k3s, std, c -> artifact(c, 0).remove("mode")));
    bad.add(new Bad("a k3s binary in a kubeadm release", Distribution.KUBEADM, std,
        c -> artifact(c, 0).put("installPath", "/usr/bin/k3s")));
    bad.add(new Bad("a kubeadm image archive in k3s's images directory", Distribution.KUBEADM, std,
        c -> artifact(c, 3).put("installPath", "/var/lib/rancher/k3s/agent/images/kubernetes-images-amd64.tar")));
    bad.add(new Bad("a k0s binary in /opt/bin", Distribution.K0S, std, c -> artifact(c, 0).put("installPath", "/opt/bin/k0s")));
    bad.add(new Bad("a k0s bundle in a subdirectory", Distribution.K0S, std,
        c -> artifact(c, 1).put("installPath", "/var/lib/k0s/images/x/bundle")));
    bad.add(new Bad("a Kairos release with two artifacts", k3s, HostOs.KAIROS,
        c -> ((ArrayNode) release(c).path("artifacts")).add(artifact(c, 0).deepCopy())));
    bad.add(new Bad("a Kairos release of a binary", k3s, HostOs.KAIROS, c -> artifact(c, 0).put("kind", "BINARY")));
    bad.add(new Bad("a Kairos image written elsewhere", k3s, HostOs.KAIROS,
        c -> artifact(c, 0).put("installPath", "/run/initramfs/cos-state/cOS/passive.img")));
    bad.add(new Bad("a Kairos oci source not pinned by digest", k3s, HostOs.KAIROS,
        c -> artifact(c, 0).put("source", "oci:quay.io/kairos/ubuntu:latest")));
    bad.add(new Bad("a Kairos source of another scheme", k3s, HostOs.KAIROS,
        c -> artifact(c, 0).put("source", "docker://quay.io/kairos/ubuntu:latest")));
    bad.add(new Bad("a Kairos release without os", k3s, HostOs.KAIROS, c -> release(c).remove("os")));
    return bad;
  }

  /** The docs' example of {@code distribution} on {@code os}, as a one-release catalogue. */
  private static ObjectNode good(Distribution distribution, HostOs os) throws Exception {
    for (String example : CatalogueDocs.examples()) {
      for (JsonNode release : JSON.readTree(example).path("releases")) {
        if (release.path("distribution").asText().equals(distribution.name())
            && HostOs.parse(release.path("os").asText("")) == os) {
          ObjectNode catalogue = JSON.createObjectNode();
          catalogue.putArray("releases").add(release.deepCopy());
          return catalogue;
        }
      }
    }
    throw new AssertionError("docs/catalogue.md has no " + distribution + " " + os + " example");
  }

  @Test
  void eachBadCatalogueIsRefusedByTheSchemaAndByTheParser() throws Exception {
    Map<String, String> disagreements = new LinkedHashMap<>();
    List<Bad> cases = badCatalogues();
    for (Bad bad : cases) {
      ObjectNode good = good(bad.distribution(), bad.os());
      Schema schema = schema(bad.distribution(), bad.os());
      assertEquals(List.of(), schema.validate(good), bad.what() + ": the unchanged catalogue");
      assertEquals(Optional.empty(), parserProblem(JSON.writeValueAsString(good)), bad.what() + ": the unchanged catalogue");
      ObjectNode changed = good.deepCopy();
      bad.change().accept(changed);
      boolean schemaRefuses = !schema.validate(changed).isEmpty();
      boolean parserRefuses = parserProblem(JSON.writeValueAsString(changed)).isPresent();
      if (!schemaRefuses || !parserRefuses) {
        disagreements.put(bad.what(), "schema refuses: " + schemaRefuses + ", parser refuses: " + parserRefuses);
      }
    }
    assertEquals(Map.of(), disagreements);
    assertTrue(cases.size() >= 40, "cases: " + cases.size());
  }

  @Test
  void aKairosDigestThatIsNotTheArtifactsIsLeftToTheWorkerAsTheDocsSay() throws Exception {
    ObjectNode catalogue = good(Distribution.K3S, HostOs.KAIROS);
    artifact(catalogue, 0).put("sha256", "ab".repeat(32));

    assertEquals(List.of(), schema(Distribution.K3S, HostOs.KAIROS).validate(catalogue));
    Optional<String> problem = parserProblem(JSON.writeValueAsString(catalogue));
    assertTrue(problem.isPresent() && problem.get().contains("is not the artifact's sha256"), problem.toString());
  }

  @Test
  void aRelaseForAnotherDistributionIsRefusedByTheSchemaOfThisOne() throws Exception {
    ObjectNode k0s = good(Distribution.K0S, HostOs.STANDARD);
    assertFalse(schema(Distribution.K3S, HostOs.STANDARD).validate(k0s).isEmpty());
    assertFalse(schema(Distribution.K0S, HostOs.KAIROS).validate(k0s).isEmpty());
  }
}
