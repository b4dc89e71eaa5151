// Whether a subject is erased, or being erased: what the app checks before an execution of the subject
// starts or resumes, and what names an execution whose history an erasure deleted. Read from the erase
// coordinators' journals (actors/lifecycle/erase.ts) and the key stores' tombstones.
import { ERASE_COORDINATOR_LOGIC_ID, ERASE_EFFECTS } from "../../machines/helpers/maintenanceIds.js";
import { SubjectErasedError } from "../../stores/errors.js";
import { ERASURE_CONTENT_DELETE_INTENDED, ERASURE_CONTENT_DELETED, STEP_COMPLETED } from "../../stores/schema.js";
import type { EventStore, ExecutionInfo } from "../../stores/types.js";
import { ERASE_COORDINATOR_ID_PREFIX, eraseCoordinatorPrefix } from "../constants.js";
import { ExecutionErasedError } from "../journal/sealing.js";
import { ErasureInProgressError } from "./errors.js";
import type { LifecycleHost } from "./host.js";

export { ErasureInProgressError };

/** The subject's erase coordinators in the catalogue (their ids built by `eraseCoordinatorId`). */
export function coordinatorsOf(infos: ExecutionInfo[], subject: string): ExecutionInfo[] {
  const prefix = eraseCoordinatorPrefix(subject);
  return infos.filter((info) => info.logicId === ERASE_COORDINATOR_LOGIC_ID && info.executionId.startsWith(prefix));
}

/** True once a coordinator journaled its result (ERASURE_CONTENT_DELETED): the shred before it is done. */
async function journaledResult(events: EventStore, coordinatorId: string): Promise<boolean> {
  return (await events.read(coordinatorId)).some((r) => r.type === ERASURE_CONTENT_DELETED);
}

/**
 * Refuses work for a subject whose erasure is unfinished (ErasureInProgressError) or done
 * (SubjectErasedError), before anything is written. Both modes: with security.crypto the key's
 * destruction says so; without it, the key stores' tombstone or a coordinator's journaled result.
 */
export async function assertSubjectOpen(
  host: Pick<LifecycleHost, "events" | "keyStores">,
  subject: string,
  executionId?: string,
): Promise<void> {
  const { events } = host;
  const coordinators = coordinatorsOf(await events.listExecutions(), subject);
  const unfinished = coordinators.find((info) => info.status === "running");
  if (unfinished) throw new ErasureInProgressError(subject, unfinished.executionId);
  const erased = () =>
    executionId === undefined ? new SubjectErasedError(subject) : new ExecutionErasedError(executionId, subject);
  for (const keys of host.keyStores) if (await keys.isDestroyed(subject)) throw erased();
  for (const info of coordinators) if (await journaledResult(events, info.executionId)) throw erased();
}

/**
 * The typed error for an execution id whose history an erasure deleted (no security.crypto): the
 * coordinators' journaled plans name the executions they erased. Undefined when none did.
 */
export async function erasedExecutionError(
  events: EventStore,
  executionId: string,
): Promise<ExecutionErasedError | undefined> {
  for (const info of await events.listExecutions()) {
    if (info.logicId !== ERASE_COORDINATOR_LOGIC_ID || !info.executionId.startsWith(ERASE_COORDINATOR_ID_PREFIX))
      continue;
    const log = await events.read(info.executionId);
    if (!log.some((r) => r.type === ERASURE_CONTENT_DELETED)) continue;
    // The plan step's journaled output (an ErasePlan), read by narrowing: it comes from the store.
    const planned: unknown = log.find((r) => r.type === STEP_COMPLETED && r.effectId === ERASE_EFFECTS.plan)?.output;
    const executions =
      typeof planned === "object" && planned !== null && "executions" in planned ? planned.executions : undefined;
    const subject = log.find((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED)?.subject;
    // Array or string: the JSON values with an `includes`.
    if (
      typeof subject === "string" &&
      (Array.isArray(executions) || typeof executions === "string") &&
      executions.includes(executionId)
    ) {
      return new ExecutionErasedError(executionId, subject);
    }
  }
  return undefined;
}
