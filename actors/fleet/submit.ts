// app.submit and what app.result does for a submitted execution: the start is journaled here (the first
// macrostep, exactly as app.start writes it) and nothing runs; a worker of the fleet (loomwork/postgres
// createWorker) claims it, and the submitting app waits for its EXECUTION_ENDED in the store.
import type { AnyStateMachine } from "xstate";
import { EVENT_SCHEMA, EXECUTION_ENDED, EXECUTION_STARTED } from "../../stores/schema.js";
import { isObject } from "../../stores/shapes.js";
import type { EventStore, FleetPort, JournalRecord, RecordOf, Stores } from "../../stores/types.js";
import type { AppHost } from "../appHost.js";
import type { StartOptions } from "../logics.js";
import type { FleetPlacement } from "../../stores/types.js";
import type { QueuePlacementOptions } from "./queues.js";

/** Options of `app.submit`: those of `app.start`, and the queue the execution waits in for a slot (`defineConfig({ queues })`). */
export interface SubmitOptions extends StartOptions, QueuePlacementOptions {}
import { ConfigError, SubmitConflictError } from "../errors.js";
import { outcomeFrom } from "../journal/outcomes.js";
import { requiredEffects } from "../logics.js";
import { planMacrostep } from "../journal/planner.js";
import type { ParentLink } from "../journal/children.js";

// Failed looks in a row (each a poll interval apart) before app.result of a submitted execution gives up.
const RESULT_RETRIES = 120;

/**
 * Journals the start of `logic` as `executionId` without running it: the fleet runs it. A resubmit with the
 * same logic (id and definition), subject and input writes nothing (start is idempotent by execution id);
 * with another one it is a SubmitConflictError naming what differs, before anything is queued or written
 * (a submit that loses the race for the first append has queued the id already, as the winner did).
 * The caller refuses an id it runs itself (RunningExecutions.submitOnce).
 */
export async function submitStart(
  host: AppHost,
  stores: Stores,
  logic: AnyStateMachine,
  options: StartOptions,
  input: unknown,
  assertSubjectOpen: (subject: string) => Promise<void>,
  links?: { parent: ParentLink; root: string },
  placement?: FleetPlacement,
): Promise<void> {
  const fleet = stores.fleet;
  if (!fleet)
    throw new ConfigError(
      "stores",
      "app.submit needs stores a fleet of workers shares: postgresStores() from loomwork/postgres. To run here, call app.start.",
    );
  const { executionId, subject } = options;
  if (subject !== undefined) await assertSubjectOpen(subject);
  host.logics.register(logic);
  const execution = await host.create(logic, executionId, subject);
  const started: RecordOf<typeof EXECUTION_STARTED> = {
    seq: 1,
    at: host.clock.now(),
    type: EXECUTION_STARTED,
    logicId: logic.id,
    ...execution.identity,
    ...(subject === undefined ? {} : { subject }),
    input: input ?? null,
    schema: EVENT_SCHEMA.version,
    ...(links ? { parent: links.parent, root: links.root } : {}),
  };
  // An id with a log: the same start is a no-op (queued again, idempotently), another one is refused before the queue.
  if ((await stores.events.head(executionId)) > 0) {
    await assertSameStart(host, executionId, started);
    await fleet.enqueue(executionId, placement);
    return;
  }
  await fleet.enqueue(executionId, placement);
  // The effects are the worker's: the logic's own effect ids plan its first macrostep as the worker will replay it.
  const effectIds = new Set([...host.effectIds, ...requiredEffects(logic)]);
  const step = planMacrostep({ machine: logic, executionId, effectIds }, undefined, started);
  try {
    await host.journal.append(executionId, 0, step.records, subject);
    // A child submitted by its parent's worker: the parent's stream followers elsewhere join it to their tree.
    if (links) {
      const child = { executionId, parentId: links.parent.executionId, parentStepId: links.parent.stepId };
      stores.streams?.publish(links.parent.executionId, { kind: "child", child: { ...child, logicId: logic.id } });
    }
  } catch (error) {
    // Submitted (or started) concurrently with the same id: the other one journaled its start; ours must be the same.
    if ((await stores.events.head(executionId)) === 0) throw error;
    await assertSameStart(host, executionId, started);
  }
}

// Refuses a submit whose start differs from the one `executionId` journaled: its logic, subject or input.
async function assertSameStart(
  host: AppHost,
  executionId: string,
  submitted: RecordOf<typeof EXECUTION_STARTED>,
): Promise<void> {
  const [journaled] = await host.journal.readForReplay(executionId, 1);
  if (journaled?.type !== EXECUTION_STARTED) return; // a log that does not begin with a start (an older release's): nothing to compare
  const logicOf = (r: JournalRecord) =>
    `logic "${String(r.logicId)}" (definition ${String(r.machineHash)}${typeof r.version === "string" ? `, version "${r.version}"` : ""})`;
  if (journaled.logicId !== submitted.logicId || journaled.machineHash !== submitted.machineHash) {
    throw new SubmitConflictError(
      executionId,
      "logic",
      `its journaled start runs ${logicOf(journaled)}, and this submit gives ${logicOf(submitted)}`,
    );
  }
  const subjectOf = (r: JournalRecord) => (typeof r.subject === "string" ? `subject "${r.subject}"` : "no subject");
  if (journaled.subject !== submitted.subject) {
    throw new SubmitConflictError(
      executionId,
      "subject",
      `its journaled start has ${subjectOf(journaled)}, and this submit gives ${subjectOf(submitted)}`,
    );
  }
  const differs = firstDifference(journaled.input ?? null, submitted.input ?? null, "input");
  if (differs !== undefined)
    throw new SubmitConflictError(
      executionId,
      "input",
      `its journaled start has another input (they differ at ${differs})`,
    );
}

// The path of the first place two JSON values differ (object keys in any order: PostgreSQL's jsonb does not keep it), or undefined when they are equal.
function firstDifference(a: unknown, b: unknown, path: string): string | undefined {
  if (a === b) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const differs = i < a.length && i < b.length ? firstDifference(a[i], b[i], `${path}[${i}]`) : `${path}[${i}]`;
      if (differs !== undefined) return differs;
    }
    return undefined;
  }
  if (!isObject(a) || !isObject(b)) return path;
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const at = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
    const differs = Object.hasOwn(a, key) && Object.hasOwn(b, key) ? firstDifference(a[key], b[key], at) : at;
    if (differs !== undefined) return differs;
  }
  return undefined;
}

/** For app.result: the outcome of an execution submitted to `fleet`, from whichever worker runs it. */
export async function submittedOutcome(
  fleet: FleetPort,
  events: Pick<EventStore, "getExecution">,
  executionId: string,
  log: (id: string) => Promise<JournalRecord[]>,
): Promise<unknown> {
  const ended = await endOnFleet(fleet, events, executionId, async (id) =>
    (await log(id)).findLast((r): r is RecordOf<typeof EXECUTION_ENDED> => r.type === EXECUTION_ENDED),
  );
  return outcomeFrom(executionId, ended);
}

/**
 * Waits for the end of an execution the fleet runs and resolves with what `readEnd` reads of it once the catalogue
 * says it ended (undefined from `readEnd`: looked at again). Rejects with `signal`'s reason once it aborts.
 */
export async function endOnFleet<T>(
  fleet: FleetPort,
  events: Pick<EventStore, "getExecution">,
  executionId: string,
  readEnd: (id: string) => Promise<T | undefined>,
  signal?: AbortSignal,
): Promise<T> {
  const stopped = signal ? aborted(signal) : undefined;
  // The database may restart while the fleet runs the execution: look again, up to a bound of failures in a row.
  for (let failures = 0; ;) {
    signal?.throwIfAborted();
    const woken = fleet.waitForEnd(executionId).catch(() => undefined);
    let ended: T | undefined;
    try {
      const info = await events.getExecution(executionId);
      if (info?.status !== "running") ended = await readEnd(executionId);
      failures = 0;
    } catch (error) {
      if (++failures >= RESULT_RETRIES) throw error;
    }
    if (ended !== undefined) return ended;
    await (stopped ? Promise.race([woken, stopped]) : woken);
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
