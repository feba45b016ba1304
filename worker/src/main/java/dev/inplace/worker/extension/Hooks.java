package dev.inplace.worker.extension;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.workflows.failure.CredentialRedactor;

/**
 * Names of the CAPI Runtime SDK wire format (reference/capi-contracts.md s.1.3 and s.2): the hook
 * group, hooks, handler names, response statuses.
 */
public final class Hooks {
  public static final String API_VERSION = "hooks.runtime.cluster.x-k8s.io/v1alpha1";
  /** Path segment of the hook group/version: {@code /<group>/<version>/}. */
  public static final String PATH_ROOT = "/" + API_VERSION + "/";

  public static final String DISCOVERY = "Discovery";
  public static final String CAN_UPDATE_MACHINE = "CanUpdateMachine";
  public static final String CAN_UPDATE_MACHINE_SET = "CanUpdateMachineSet";
  public static final String UPDATE_MACHINE = "UpdateMachine";
  public static final String GENERATE_UPGRADE_PLAN = "GenerateUpgradePlan";

  /** Handler names (DNS-1123 labels) as discovery declares them; CAPI lower-cases the hook name in the path. */
  public static final String CAN_UPDATE_MACHINE_HANDLER = "can-update-machine";
  public static final String CAN_UPDATE_MACHINE_SET_HANDLER = "can-update-machineset";
  public static final String UPDATE_MACHINE_HANDLER = "update-machine";
  /** A ClusterClass names it as {@code generate-upgrade-plan.<ExtensionConfig name>}. */
  public static final String GENERATE_UPGRADE_PLAN_HANDLER = "generate-upgrade-plan";

  public static final String SUCCESS = "Success";
  public static final String FAILURE = "Failure";

  /** Seconds each handler may take, as declared in discovery (CAPI accepts 0..30, default 10). */
  public static final int TIMEOUT_SECONDS = 10;

  private Hooks() {}

  /** {@code {"apiVersion":..,"kind":"<Hook>Response","status":..,"message":..}}. */
  static ObjectNode response(String hook, String status, String message) {
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    o.put("apiVersion", API_VERSION);
    o.put("kind", hook + "Response");
    o.put("status", status);
    o.put("message", message == null ? "" : message);
    return o;
  }

  /**
   * {@code response} as sent: its message (which CAPI copies into the Machine's conditions) with
   * credentials redacted ({@link CredentialRedactor}).
   */
  static ObjectNode redacted(ObjectNode response) {
    if (response.path("message").isTextual()) {
      response.put("message", CredentialRedactor.redact(response.get("message").asText()));
    }
    return response;
  }

  static ObjectNode failure(String hook, String message) {
    ObjectNode o = response(hook, FAILURE, message);
    if (UPDATE_MACHINE.equals(hook)) {
      o.put("retryAfterSeconds", 0); // required in the schema; meaningless with Failure
    }
    return o;
  }
}
