package dev.inplace.worker.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * CanUpdateMachine and CanUpdateMachineSet against fixtures written from the published schema
 * (hooks/*.json: request and exact expected response, patches base64 as CAPI decodes them), and
 * CAPI's own check replayed: apply the patches to the whole current objects, copy back the spec,
 * compare with desired.
 */
class CanUpdateContractTest {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> CAPI_IGNORED = Set.of("clusterName", "bootstrap", "infrastructureRef", "providerID");

  static JsonNode fixture(String name) throws Exception {
    try (InputStream in = CanUpdateContractTest.class.getResourceAsStream("/hooks/" + name)) {
      return JSON.readTree(in);
    }
  }

  private record Shape(String root, List<String> objects, List<String> patchFields, Function<JsonNode, ObjectNode> hook) {}

  private static final Shape MACHINE = new Shape("/spec",
      List.of("machine", "infrastructureMachine", "bootstrapConfig"),
      List.of("machinePatch", "infrastructureMachinePatch", "bootstrapConfigPatch"),
      CanUpdateHook::canUpdateMachine);
  private static final Shape MACHINE_SET = new Shape("/spec/template/spec",
      List.of("machineSet", "infrastructureMachineTemplate", "bootstrapConfigTemplate"),
      List.of("machineSetPatch", "infrastructureMachineTemplatePatch", "bootstrapConfigTemplatePatch"),
      CanUpdateHook::canUpdateMachineSet);

  private static Shape shape(String fixture) {
    return fixture.startsWith("can-update-machineset") ? MACHINE_SET : MACHINE;
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "can-update-machine-accept.json",
      "can-update-machine-decline-files.json",
      "can-update-machine-decline-downgrade.json",
      "can-update-machine-decline-minor-skip.json",
      "can-update-machineset-accept.json",
      "can-update-machineset-decline-infrastructure.json"})
  void answersExactlyAsTheFixtureSays(String name) throws Exception {
    JsonNode fixture = fixture(name);
    ObjectNode answer = shape(name).hook().apply(fixture.get("request"));
    assertEquals(fixture.get("response"), answer, () -> name + " answered " + answer.toPrettyString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"can-update-machine-accept.json", "can-update-machineset-accept.json",
      // k0smotron: a K0sWorkerConfigTemplate that pins the version, bumped with the MachineSet's.
      "can-update-machineset-accept-k0s-pinned.json"})
  void anAcceptedChangeMakesCapisPatchedCurrentEqualDesired(String name) throws Exception {
    JsonNode request = fixture(name).get("request");
    Shape shape = shape(name);
    ObjectNode answer = shape.hook().apply(request);
    for (int i = 0; i < shape.objects().size(); i++) {
      String object = shape.objects().get(i);
      JsonNode patched = capiApply(request.get("current").get(object), answer.get(shape.patchFields().get(i)), shape.root());
      assertEquals(cleanup(request.get("desired").get(object).at(shape.root()), i),
          cleanup(patched.at(shape.root()), i), object + " after the patch");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "can-update-machine-decline-files.json",
      "can-update-machine-decline-downgrade.json",
      "can-update-machine-decline-minor-skip.json",
      "can-update-machineset-decline-infrastructure.json"})
  void aDeclinedChangeLeavesCapisCheckFailingSoItReplacesTheMachine(String name) throws Exception {
    JsonNode request = fixture(name).get("request");
    Shape shape = shape(name);
    ObjectNode answer = shape.hook().apply(request);
    assertEquals("Success", answer.get("status").asText());
    shape.patchFields().forEach(f -> assertFalse(answer.has(f), f + " must be left out when declining"));
    boolean allEqual = true;
    for (int i = 0; i < shape.objects().size(); i++) {
      String object = shape.objects().get(i);
      allEqual &= cleanup(request.get("current").get(object).at(shape.root()), i)
          .equals(cleanup(request.get("desired").get(object).at(shape.root()), i));
    }
    assertFalse(allEqual, "without patches CAPI must see a difference");
  }

  @Test
  void theAnswerIsTheSameBytesEveryTimeBecauseCapiCachesIt() throws Exception {
    JsonNode request = fixture("can-update-machineset-accept.json").get("request");
    String first = JSON.writeValueAsString(CanUpdateHook.canUpdateMachineSet(request));
    String second = JSON.writeValueAsString(CanUpdateHook.canUpdateMachineSet(request.deepCopy()));
    assertEquals(first, second);
  }

  @Test
  void aFieldOfTheSpecInplaceDoesNotKnowIsDeclined() throws Exception {
    ObjectNode request = (ObjectNode) fixture("can-update-machine-accept.json").get("request");
    ((ObjectNode) request.at("/desired/machine/spec")).put("failureDomain", "rack-2");
    ObjectNode answer = CanUpdateHook.canUpdateMachine(request);
    assertEquals("Success", answer.get("status").asText());
    assertFalse(answer.has("machinePatch"));
    assertTrue(answer.get("message").asText().contains("machine.spec.failureDomain changed"), answer.toString());
  }

  @Test
  void aBootstrapVersionThatDoesNotMatchTheMachineIsDeclined() throws Exception {
    ObjectNode request = (ObjectNode) fixture("can-update-machine-accept.json").get("request");
    ((ObjectNode) request.at("/desired/bootstrapConfig/spec")).put("version", "v1.31.1+k3s1");
    ObjectNode answer = CanUpdateHook.canUpdateMachine(request);
    assertFalse(answer.has("machinePatch"));
    assertTrue(answer.get("message").asText().contains("not the machine's version v1.31.2+k3s1"), answer.toString());
  }

  @Test
  void aVersionChangeOfAnUnknownBootstrapProviderIsDeclinedUnlessADistributionIsSet() throws Exception {
    ObjectNode request = (ObjectNode) fixture("can-update-machine-accept.json").get("request");
    request.remove("settings");
    for (String side : List.of("current", "desired")) {
      ObjectNode bootstrap = (ObjectNode) request.at("/" + side + "/bootstrapConfig");
      bootstrap.put("kind", "TalosConfig");
      ((ObjectNode) bootstrap.get("spec")).remove("version");
    }
    ObjectNode declined = CanUpdateHook.canUpdateMachine(request);
    assertFalse(declined.has("machinePatch"));
    assertTrue(declined.get("message").asText().contains("neither k3s"), declined.toString());

    request.putObject("settings").put("distribution", "k3s");
    assertTrue(CanUpdateHook.canUpdateMachine(request).has("machinePatch"));
  }

  @Test
  void onlyIgnoredReferencesDifferingNeedsNoPatch() throws Exception {
    ObjectNode request = (ObjectNode) fixture("can-update-machine-accept.json").get("request");
    request.set("desired", request.get("current").deepCopy());
    ((ObjectNode) request.at("/desired/machine/spec/infrastructureRef")).put("name", "edge-1-cp-0-rotated");
    ObjectNode answer = CanUpdateHook.canUpdateMachine(request);
    assertEquals("no change for inplace to make", answer.get("message").asText());
    assertFalse(answer.has("machinePatch"));
  }

  @Test
  void aRequestWithoutTheMachineIsAClearFailure() {
    ObjectNode request = JSON.createObjectNode().put("kind", "CanUpdateMachineRequest");
    BadRequest e = org.junit.jupiter.api.Assertions.assertThrows(BadRequest.class, () -> CanUpdateHook.canUpdateMachine(request));
    assertEquals("current.machine is required", e.getMessage());
    assertNotEquals(null, e.getMessage());
  }

  /** What CAPI does: decode the base64 RFC 6902 patch, apply it to the whole object, keep only the spec part. */
  static JsonNode capiApply(JsonNode current, JsonNode patch, String root) throws Exception {
    if (patch == null) {
      return current;
    }
    assertEquals("JSONPatch", patch.get("patchType").asText());
    JsonNode ops = JSON.readTree(new String(Base64.getDecoder().decode(patch.get("patch").asText()), StandardCharsets.UTF_8));
    List<JsonPatch.Op> list = new ArrayList<>();
    for (JsonNode op : ops) {
      list.add(new JsonPatch.Op(op.get("op").asText(), op.get("path").asText(), op.get("value")));
    }
    JsonNode patched = JsonPatch.apply(current, list);
    ObjectNode result = current.deepCopy();
    // CopySpec: only the spec (or spec.template.spec) is taken from the patched object.
    List<String> segments = JsonPatch.segments(root);
    ObjectNode parent = result;
    for (String s : segments.subList(0, segments.size() - 1)) {
      parent = (ObjectNode) parent.get(s);
    }
    parent.set(segments.get(segments.size() - 1), patched.at(root));
    return result;
  }

  /** CleanupMachineSpecForDiff: the Machine's references are left out of the comparison. */
  private static JsonNode cleanup(JsonNode spec, int objectIndex) {
    if (objectIndex != 0 || !spec.isObject()) {
      return spec;
    }
    ObjectNode copy = spec.deepCopy();
    CAPI_IGNORED.forEach(copy::remove);
    return copy;
  }

  @Test
  void k0smotronBootstrapKindsAndAK0sVersionSelectK0s() {
    HookSettings none = new HookSettings(java.util.Map.of());
    for (String kind : List.of("K0sWorkerConfig", "K0sWorkerConfigTemplate", "K0sControllerConfig")) {
      assertEquals(
          java.util.Optional.of(dev.inplace.workflows.api.Distribution.K0S), CanUpdateHook.distributionOf(kind, none), kind);
    }
    assertEquals(
        java.util.Optional.of(dev.inplace.workflows.api.Distribution.K0S),
        CanUpdateHook.distributionOf("", none, "v1.31.2+k0s.0"));
    assertEquals(java.util.Optional.empty(), CanUpdateHook.distributionOf("", none, "v1.31.2"));
  }
}
