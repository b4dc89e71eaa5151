// The exact folded state of a journaled execution, given the machine that wrote it (`--logic <module>`):
// its records are copied into memory stores and resumed there with effects that never run, so the
// journal directory is never written and no model or tool is called.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AnyStateMachine, InspectionEvent } from "xstate";
import { childIdsOf } from "../actors/journal/inspectChildren.js";
import { requiredEffects } from "../actors/logics.js";
import {
  createApp,
  defineConfig,
  EXECUTION_ENDED,
  memoryStores,
  type Effect,
  type StoredRecord,
  type ReplayReport,
} from "../index.js";
import { CliError, EXIT, UsageError } from "./errors.js";
import { isSealed } from "./journal.js";

const isMachine = (value: unknown): value is AnyStateMachine =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as AnyStateMachine).transition === "function" &&
  "root" in value &&
  typeof (value as AnyStateMachine).id === "string";

/**
 * Imports the module at `file`. A .ts module on plain Node (the installed CLI, under npx) is loaded with the tsx the
 * project has (its `tsx/esm/api` register, resolved from the working directory), when it has one.
 */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(resolve(file)).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if (!/\.[cm]?ts$/.test(file) || !/Unknown file extension/.test(String(error))) throw error;
    const register = await projectTsx();
    if (!register) throw error;
    register();
    // A query makes it a new module: the failed load of the bare URL stays in the loader's module map.
    return (await import(`${url}?tsx`)) as Record<string, unknown>;
  }
}

async function projectTsx(): Promise<(() => unknown) | undefined> {
  try {
    // Its ESM entry (the `import` condition: a require resolution gives the CommonJS one), from its package.json.
    const manifest = createRequire(join(process.cwd(), "package.json")).resolve("tsx/package.json");
    const { exports } = JSON.parse(readFileSync(manifest, "utf8")) as {
      exports?: Record<string, { import?: string | { default?: string } }>;
    };
    const entry = exports?.["./esm/api"]?.import;
    const path = typeof entry === "string" ? entry : entry?.default;
    if (!path) return undefined;
    const loaded: unknown = await import(pathToFileURL(join(dirname(manifest), path)).href);
    const register =
      typeof loaded === "object" && loaded !== null && "register" in loaded ? loaded.register : undefined;
    return typeof register === "function" ? () => register() : undefined;
  } catch {
    return undefined;
  }
}

/** The machines a module exports (`file.ts`, or `file.ts#exportName` for one). */
export async function loadLogics(spec: string): Promise<AnyStateMachine[]> {
  const [file, name] = spec.split("#") as [string, string | undefined];
  let module: Record<string, unknown>;
  try {
    module = await importModule(file);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const hint =
      /\.[cm]?ts$/.test(file) && /Unknown file extension/.test(message)
        ? "Node loads no .ts module by itself: install tsx in your project (npm install -D tsx), which the CLI then loads it with, or pass the compiled .js."
        : undefined;
    throw new CliError(`cannot load --logic ${file}: ${message.split("\n")[0]}`, EXIT.notFound, hint);
  }
  const values = name ? [module[name]] : Object.values(module);
  const machines = values.filter(isMachine);
  if (machines.length === 0)
    throw new UsageError(
      `--logic ${spec} exports no XState machine${name ? ` named ${name}` : ""}`,
      "Export the machine (or the agentLoop$(...) result) from that module.",
    );
  return machines;
}

export interface InspectedState {
  value: unknown;
  context: unknown;
  status: string;
  output?: unknown;
  /** The ids of the child actors (steps) the snapshot lists. */
  children: string[];
}

export interface MemoryReplay {
  /** UTF-8 bytes of the folded state's JSON at the log's head, as app.stats measures it. */
  stateBytes: number;
  replay: ReplayReport;
  /** The machine's snapshot after each macrostep, in journal order. */
  snapshots: InspectedState[];
}

/** Replays `records` (every record of the execution, from seq 1) through `logic` in memory. */
export async function replayInMemory(
  executionId: string,
  records: StoredRecord[],
  logic: AnyStateMachine,
  onMacrostep?: (count: number) => void,
): Promise<MemoryReplay> {
  if (records.some(isSealed)) {
    throw new CliError(
      `execution "${executionId}" has sealed records (security.crypto): they cannot be replayed without the app's keys`,
      EXIT.failure,
      "Drop --logic to measure the state from the snapshot instead.",
    );
  }
  // app.stop journals EXECUTION_ENDED { status: "stopped" } on its own (the planner never derives "stopped"),
  // and app.resume does not accept that record yet: replay up to it, the state the execution was stopped in.
  const last = records.at(-1);
  const replayable = last?.type === EXECUTION_ENDED && last.status === "stopped" ? records.slice(0, -1) : records;
  const stores = memoryStores();
  await stores.events.append(executionId, 0, replayable);
  // Effects that never settle: replay serves every recorded step from the log, and what was in flight
  // stays pending until the app closes.
  const never: Effect = { kind: "task", run: () => new Promise(() => undefined) };
  const effects = Object.fromEntries(requiredEffects(logic).map((id) => [id, never]));
  const snapshots: InspectedState[] = [];
  const inspect = (event: InspectionEvent) => {
    // The execution's own snapshots, not its children's (actors/journal/inspectChildren.ts).
    if (event.type !== "@xstate.snapshot" || event.actorRef.sessionId !== `loom:${executionId}`) return;
    const s = event.snapshot as unknown as InspectedState;
    snapshots.push({
      value: s.value,
      context: s.context,
      status: s.status,
      children: childIdsOf(event.snapshot),
      ...(s.output === undefined ? {} : { output: s.output }),
    });
    onMacrostep?.(snapshots.length);
  };
  const app = createApp(
    defineConfig({ stores, effects, logics: [logic], execution: { snapshotEvery: false }, observability: { inspect } }),
  );
  try {
    const actor = await app.resume(executionId);
    const { stateBytes } = await app.stats(executionId);
    return { stateBytes, replay: actor.replay, snapshots };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CliError(
      `the logic "${logic.id}" does not replay execution "${executionId}": ${message}`,
      EXIT.failure,
      "Pass the module with the machine version that wrote this journal.",
    );
  } finally {
    await app.close();
  }
}
