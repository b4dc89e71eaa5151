// Time travel into the inspector: a stored journal replayed, up to a seq, to an XState inspector, as
// the live path would have told it (the execution's actor, its events, snapshots and child actors).
// Nothing runs and the stores are never written: the records are copied into memory stores and
// resumed there with effects that never settle.
import type { AnyStateMachine, InspectionEvent, Observer } from "xstate";
import { EXECUTION_ENDED, isMacrostepInputType } from "../stores/schema.js";
import { memoryStores } from "../stores/memory.js";
import type { EventStore, StoredRecord } from "../stores/types.js";
import { createApp } from "./app.js";
import { defineConfig } from "./config.js";
import type { Effect } from "./effects/effect.js";
import { requiredEffects } from "./logics.js";

/** Options of `replayIntoInspector`. */
export interface ReplayIntoInspectorOptions {
  /** The machine that wrote the journal (the version it started on). */
  logic: AnyStateMachine;
  /** Where the inspection events go: `inspector.inspect` of `@statelyai/inspect`, or a function. */
  inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Replay up to this seq, through the end of the macrostep that holds it. @defaultValue the head */
  toSeq?: number;
}

/** What was replayed: the last seq, and how many macrosteps the inspector was told of. */
export interface InspectorReplay {
  toSeq: number;
  macrosteps: number;
}

/**
 * The records up to `toSeq`, through the end of the macrostep that holds it: a seq inside a macrostep
 * (its input record) takes the transition and records it caused. RangeError for a seq outside 1..head.
 */
export function recordsThrough(records: StoredRecord[], toSeq: number): StoredRecord[] {
  const head = records.at(-1)?.seq ?? 0;
  if (!Number.isInteger(toSeq) || toSeq < 1 || toSeq > head)
    throw new RangeError(`toSeq must be a seq of the journal, 1 to ${head}; got ${toSeq}`);
  let end = records.findIndex((r) => r.seq === toSeq) + 1;
  while (
    end < records.length &&
    !isMacrostepInputType(records[end]!.type) &&
    records[end - 1]!.type !== EXECUTION_ENDED
  )
    end++;
  return records.slice(0, end);
}

/**
 * Replays a stored execution into an inspector, step by step up to `toSeq` (time travel by seq): the
 * inspector shows the execution as it was then. Sealed records (security.crypto) are refused.
 *
 * @example
 * const inspector = createBrowserInspector();
 * await replayIntoInspector(stores.events, "chat-1", { logic: assistant, inspect: inspector.inspect, toSeq: 40 });
 */
export async function replayIntoInspector(
  events: EventStore,
  executionId: string,
  options: ReplayIntoInspectorOptions,
): Promise<InspectorReplay> {
  const all = [
    ...(await events.readArchives(executionId)).flatMap((segment) => segment.records),
    ...(await events.read(executionId)),
  ];
  if (all.length === 0)
    throw new RangeError(`replayIntoInspector: execution "${executionId}" has no records in these stores`);
  if (all.some((r) => typeof r.sealed === "string"))
    throw new RangeError(
      `replayIntoInspector: execution "${executionId}" has sealed records (security.crypto); they are not replayed without the app`,
    );
  let records = options.toSeq === undefined ? all : recordsThrough(all, options.toSeq);
  // A stop is journaled on its own (app.stop) and a resume does not take it: the state it was stopped in.
  const last = records.at(-1);
  const toSeq = last?.seq ?? 0;
  if (last?.type === EXECUTION_ENDED && last.status === "stopped") records = records.slice(0, -1);
  const stores = memoryStores();
  await stores.events.append(executionId, 0, records);
  const never: Effect = { kind: "task", run: () => new Promise(() => undefined) };
  // The effects of the logic and of every machine it runs as a child execution (not the machines themselves).
  const effects = Object.fromEntries(requiredEffects(options.logic).map((id) => [id, never]));
  const app = createApp(
    defineConfig({
      stores,
      effects,
      logics: [options.logic],
      execution: { snapshotEvery: false },
      observability: { inspect: options.inspect },
    }),
  );
  try {
    await app.resume(executionId);
    return { toSeq, macrosteps: records.filter((r) => isMacrostepInputType(r.type)).length };
  } finally {
    await app.close();
  }
}
