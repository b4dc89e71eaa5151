// What an external sender may send. Every entry an event comes in by (JournaledActor.send / sendAsync, and
// through it the bridge and the control socket; the fleet inbox's `send`; the CLI) calls this one check
// before anything is journaled: an event is an object with a string `type`; its type is none of XState's
// (`xstate.*`: a step's `xstate.done.actor.<id>` / `xstate.error.actor.<id>`, `xstate.after.*` timers,
// `xstate.init`, `xstate.stop`; `@xstate.*`: inspection) nor the runtime's (`loom.*`: record types,
// internal ids), which the runtime makes from its own records and never takes from a sender; and a
// TOOL_APPROVAL has the shape of a decision. Events the runtime makes itself (a step's outcome, a timer)
// enter the execution's mailbox without passing here.
import type { AnyEventObject } from "xstate";
import { RUNTIME_ID_PREFIX, TOOL_APPROVAL_EVENT } from "../../machines/helpers/constants.js";
import { isEventObject, shown } from "../../stores/shapes.js";
import { checkApprovalShape } from "../agents/approvals.js";
import { ConfigError, ReservedEventError } from "../errors.js";
import { plainJson } from "./json.js";

/** The prefixes of the event types no external sender may send: XState's own, its inspection events', and the runtime's (`loom.`). */
export const RESERVED_EVENT_PREFIXES: readonly string[] = ["xstate.", "@xstate.", RUNTIME_ID_PREFIX];

/** The reserved prefix `type` starts with, or undefined for a type a sender may use. */
export function reservedPrefixOf(type: string): string | undefined {
  return RESERVED_EVENT_PREFIXES.find((prefix) => type.startsWith(prefix));
}

/**
 * `event` as an event an external sender may send, or the typed refusal: ConfigError (`send.event`) for a
 * value that is not an object with a string `type`, ReservedEventError for a reserved type,
 * ApprovalMalformedError for a TOOL_APPROVAL that is not a decision. `executionId` is named in the error.
 *
 * @example
 * checkExternalEvent({ type: "USER_MESSAGE", text: "hi" }); // passes
 * checkExternalEvent({ type: "xstate.done.actor.model", output }); // throws ReservedEventError
 */
export function checkExternalEvent(event: unknown, executionId?: string): AnyEventObject {
  if (!isEventObject(event))
    throw new ConfigError("send.event", `an event is an object with a string "type"; got ${shown(event)}.`);
  const prefix = reservedPrefixOf(event.type);
  if (prefix !== undefined) throw new ReservedEventError(event.type, prefix, executionId);
  if (event.type === TOOL_APPROVAL_EVENT) checkApprovalShape(event, executionId);
  return event;
}

/**
 * `event` as it is journaled (a fresh plain-JSON copy), checked as `checkExternalEvent` checks it, before and
 * after the copy: an event's `toJSON` may turn it into another. A value with no faithful JSON form is a
 * ConfigError (`send.event`) naming the path inside the event. What every entry journals or queues.
 */
export function plainExternalEvent(event: unknown, executionId?: string): AnyEventObject {
  const given = checkExternalEvent(event, executionId);
  const copy = plainJson(
    given,
    (reason) =>
      new ConfigError("send.event", `event "${given.type}" must be plain JSON to be journaled, but holds ${reason}.`),
    "event",
  );
  if (!isEventObject(copy))
    throw new ConfigError(
      "send.event",
      `event "${given.type}" is journaled as ${shown(copy)}, which is not an object with a string "type".`,
    );
  return checkExternalEvent(copy, executionId);
}
