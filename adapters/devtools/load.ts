// The devtools model read from an event store (a filesystem journal, IndexedDB, memory): the records, a
// replay of them with nothing run (as actors/inspectReplay.ts replays: memory stores, effects that never settle), and
// the catalogue as a tree. The store is only read.
import type { AnyStateMachine, InspectionEvent } from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import type { Effect } from "../../actors/effects/effect.js";
import { childIdsOf } from "../../actors/journal/inspectChildren.js";
import { childMachinesOf } from "../../actors/journal/children.js";
import { requiredEffects } from "../../actors/logics.js";
import { memoryStores } from "../../stores/memory.js";
import { expandRecords } from "../../stores/recordFormat.js";
import { EXECUTION_ENDED, EXECUTION_STARTED } from "../../stores/schema.js";
import type { EventStore, StoredRecord } from "../../stores/types.js";
import { buildModel, parentOf, treeOf, type ReplayedState } from "./model.js";
import type { DevtoolsExecution, DevtoolsModel } from "./view.js";

/** Every record of an execution in the read form, archived ones first. */
export async function readExecution(events: EventStore, executionId: string): Promise<StoredRecord[]> {
  const archived = (await events.readArchives(executionId)).flatMap((segment) => segment.records);
  return expandRecords([...archived, ...(await events.read(executionId))]);
}

/** The machine and every machine it can run as a child execution (its `setup({ actors })`, inline invokes), recursively. */
export function machinesOf(logic: AnyStateMachine): AnyStateMachine[] {
  return [logic, ...childMachinesOf(logic)];
}

/**
 * The machine's snapshot after each macrostep, and the steps left in flight, by replaying the journal in memory
 * stores with effects that never settle (nothing is written, no model or tool is called): the effects of the logic
 * and of the child machines it runs (`requiredEffects`).
 */
export async function replayStates(
  events: EventStore,
  executionId: string,
  logic: AnyStateMachine,
): Promise<{ states: ReplayedState[]; inFlight: string[] }> {
  let records = [
    ...(await events.readArchives(executionId)).flatMap((segment) => segment.records),
    ...(await events.read(executionId)),
  ];
  // A stop is journaled on its own and a resume does not take it: the state it was stopped in.
  const last = records.at(-1);
  if (last?.type === EXECUTION_ENDED && last.status === "stopped") records = records.slice(0, -1);
  const states: ReplayedState[] = [];
  let inFlight: string[] = [];
  const inspect = (event: InspectionEvent) => {
    // The execution's own snapshots, not its children's.
    if (event.type !== "@xstate.snapshot" || event.actorRef.sessionId !== `loom:${executionId}`) return;
    const s = event.snapshot as unknown as ReplayedState;
    states.push({ value: s.value, context: s.context, status: s.status });
    inFlight = childIdsOf(event.snapshot);
  };
  const machines = machinesOf(logic);
  const never: Effect = { kind: "task", run: () => new Promise(() => undefined) };
  const effects: Record<string, Effect> = Object.fromEntries(requiredEffects(logic).map((id) => [id, never]));
  const stores = memoryStores();
  await stores.events.append(executionId, 0, records);
  const app = createApp(
    defineConfig({
      stores,
      effects,
      logics: machines,
      execution: { snapshotEvery: false },
      observability: { inspect },
    }),
  );
  try {
    await app.resume(executionId);
  } finally {
    await app.close();
  }
  return { states, inFlight };
}

/** Options of `loadModel`. */
export interface LoadModelOptions {
  /** The machines the app runs: the one whose id the execution started with draws the statechart and is replayed for the context. */
  logics?: readonly AnyStateMachine[];
}

/**
 * The devtools model of one execution, from the store alone (nothing is run or written). With its machine among
 * `logics`, the statechart is the machine's and each state carries its context; without it, both come from the
 * journal's TRANSITION records.
 */
export async function loadModel(
  events: EventStore,
  executionId: string,
  options: LoadModelOptions = {},
): Promise<DevtoolsModel> {
  const records = await readExecution(events, executionId);
  if (records.length === 0) throw new RangeError(`no execution "${executionId}" in these stores`);
  const logicId = records.find((r) => r.type === EXECUTION_STARTED)?.logicId;
  const logic = options.logics?.find((m) => m.id === logicId);
  if (!logic)
    return buildModel({
      executionId,
      records,
      note: `No machine "${String(logicId)}" was given: the statechart and the states are inferred from the journal, without context.`,
    });
  if (records.some((r) => typeof r.sealed === "string"))
    return buildModel({
      executionId,
      records,
      logic,
      note: "The journal is sealed (security.crypto): the states are the TRANSITION records' values, without context.",
    });
  try {
    const { states, inFlight } = await replayStates(events, executionId, logic);
    return buildModel({ executionId, records, logic, replayed: states, stepsInFlight: inFlight });
  } catch (error) {
    return buildModel({
      executionId,
      records,
      logic,
      note: `The machine "${logic.id}" does not replay this journal (${error instanceof Error ? error.message : String(error)}): the states come from its TRANSITION records.`,
    });
  }
}

/** The store's executions as a tree: each child execution under the parent its start record names. */
export async function loadTree(events: EventStore): Promise<DevtoolsExecution[]> {
  const infos = await events.listExecutions();
  const rows = await Promise.all(
    infos.map(async (info) => {
      // The start record is seq 1: in the live log, or in the first archive segment once archived.
      let start = (await events.read(info.executionId, 1).catch(() => []))[0];
      if (start?.seq !== 1) start = (await events.readArchives(info.executionId).catch(() => []))[0]?.records[0];
      return { ...info, ...parentOf(start) };
    }),
  );
  return treeOf(rows.sort((a, b) => a.startedAt - b.startedAt || a.executionId.localeCompare(b.executionId)));
}
