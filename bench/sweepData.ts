// Data for the sweep and erase measurements: N executions citing 10 claim-checked blobs each. One real
// agent run (claim-check on, preview: false) is the template; every execution is that log with its own
// subject and its own blobs' addresses, appended through the store's ordinary append.
import { utf8 } from "../stores/bytes.js";
import { EXECUTION_STARTED } from "../stores/schema.js";
import type { StoredRecord, Stores } from "../stores/types.js";
import { memoryStores } from "../stores/memory.js";
import { EXECUTION_ID, runAgent } from "./agent.js";

export const BLOBS_PER_EXECUTION = 10;
/** Executions per subject: erasing one subject deletes this many histories and their blobs. */
export const EXECUTIONS_PER_SUBJECT = 10;
/** Share of executions whose history retention deletes before the sweep: their blobs become reclaimable. */
export const RETIRED_SHARE = 0.2;

export const subjectOf = (i: number) => `subject-${Math.floor(i / EXECUTIONS_PER_SUBJECT)}`;
export const executionIdOf = (i: number) => `run-${String(i).padStart(6, "0")}`;

interface Template {
  text: string;
  addresses: string[];
}

let template: Template | undefined;

/** The template log: a real run whose tool results were all offloaded. */
async function templateLog(): Promise<Template> {
  if (template) return template;
  const stores = memoryStores();
  const { app } = await runAgent(stores, BLOBS_PER_EXECUTION + 1, "on, preview: false");
  await app.close();
  const records = await stores.events.read(EXECUTION_ID);
  const text = JSON.stringify(records);
  const addresses = [...new Set(text.match(/sha256:[0-9a-f]{64}/g) ?? [])];
  if (addresses.length !== BLOBS_PER_EXECUTION)
    throw new Error(`sweep template: expected ${BLOBS_PER_EXECUTION} offloaded results, got ${addresses.length}`);
  template = { text, addresses };
  return template;
}

/** A blob just over the claim-check's 1 KiB cap (the sweep never reads blob bytes, only their listing). */
function blobBytes(execution: number, turn: number): Uint8Array {
  return utf8(JSON.stringify({ rows: [{ id: execution, turn, text: "owl barn night hunt vole ".repeat(44) }] }));
}

/** Fills `stores` with `executions` histories of 10 cited blobs each, `concurrency` executions at a time. */
export async function generateSweepData(
  stores: Stores,
  executions: number,
  concurrency = 32,
): Promise<{ blobs: number; bytes: number; logBytes: number }> {
  const { text, addresses } = await templateLog();
  let blobs = 0;
  let bytes = 0;
  let logBytes = 0;
  const one = async (i: number) => {
    let log = text;
    for (let t = 0; t < addresses.length; t++) {
      const data = blobBytes(i, t);
      const address = await stores.content.put(data);
      blobs++;
      bytes += data.byteLength;
      log = log.replaceAll(addresses[t]!, address);
    }
    logBytes += log.length;
    const records = JSON.parse(log) as StoredRecord[];
    const started = records[0]!;
    if (started.type !== EXECUTION_STARTED)
      throw new Error("sweep template: the first record is not EXECUTION_STARTED");
    started.subject = subjectOf(i);
    await stores.events.append(executionIdOf(i), 0, records);
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, executions) }, async () => {
      while (next < executions) await one(next++);
    }),
  );
  return { blobs, bytes, logBytes };
}

/** Up to `count` distinct subjects spread over the executions, for repeated erasures. */
export function subjectsToErase(executions: number, count: number): string[] {
  return [
    ...new Set(Array.from({ length: count }, (_, k) => subjectOf(Math.floor(((k + 1) * executions) / (count + 1))))),
  ];
}

/** The executions retention deletes before the sweep (every fifth), leaving their blobs uncited. */
export function retiredExecutions(executions: number): string[] {
  const every = Math.round(1 / RETIRED_SHARE);
  return Array.from({ length: executions }, (_, i) => i)
    .filter((i) => i % every === every - 1)
    .map(executionIdOf);
}
