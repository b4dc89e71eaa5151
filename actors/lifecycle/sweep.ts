// The content sweep (ADR 0140 D6, sweep side, with the TTL measured from the citing execution's end): the internal effects of the
// `sweep` machine and `sweep(app)`. What it keeps and what it reclaims:
// - a load-bearing citation (a retained envelope at the top of a STEP_COMPLETED output, anything an
//   archive segment or a snapshot cites, a sealed record's refs when the app has no key) keeps its blob
//   however old, for as long as it is cited;
// - any other citation (telemetry: no retain, or a nested lookalike) keeps its blob for `ttlMs`, measured
//   from the citing execution's END once it has ended, else from the citing record's `at`;
// - an uncited blob is reclaimable.
// Every delete is `deleteIfUntouchedSince(touchCutoff)`, the touch clock read when the sweep began, so a
// blob put (or re-put) since then survives. Memory holds the set of cited addresses and one
// execution's log at a time; blobs are streamed from `list()` and their bytes are never read.
import {
  SWEEP_EFFECTS,
  SWEEP_LOGIC_ID,
  sweepMachine,
  type SweepBatch,
  type SweepBatchInput,
  type SweepBegun,
  type SweepInput,
  type SweepResult,
  type SweepScanned,
} from "../../machines/sweep.js";
import { fnv1a32 } from "../../stores/bytes.js";
import { isSealed } from "../../stores/recordSealing.js";
import type { ContentStore, StoredRecord } from "../../stores/types.js";
import { citesUnknown, retainRootsOf, visitCitedAddresses } from "./citations.js";
import { ExecutionErasedError } from "../journal/sealing.js";
import { DEFAULT_SWEEP_BATCHES, sweepExecutionId, sweepNumber } from "../constants.js";
import { ConfigError } from "../errors.js";
import {
  isInternalLogic,
  type CitationIndex,
  type InternalEffect,
  type InternalEffectContext,
  type LifecycleHost,
} from "./host.js";
import { inflightOffloads } from "./offloads.js";

export type { SweepResult } from "../../machines/sweep.js";

export { DEFAULT_SWEEP_BATCHES } from "../constants.js";
/** Finished sweep executions kept for audit; older ones are deleted when a new sweep starts. */
export const SWEEP_LOGS_KEPT = 10;
const PROGRESS_EVERY = 256;

/** Options of `sweepUnpinnedContent` and `sweep(app, options)`. */
export interface SweepOptions {
  /** How long a telemetry ref (no load-bearing retain) outlives its citation, or its execution's end. */
  ttlMs: number;
  /** Journaled reclaim batches (each streams `list()` once and handles its slice of the addresses). @defaultValue 4 */
  batches?: number;
}

/** A content store with the conditional delete and the touch clock the sweep relies on. */
type SweepableContentStore = ContentStore & Required<Pick<ContentStore, "deleteIfUntouchedSince" | "touchClock">>;

function isSweepable(content: ContentStore): content is SweepableContentStore {
  return typeof content.deleteIfUntouchedSince === "function" && typeof content.touchClock === "function";
}

/** The content store the sweep deletes from, refused unless it has the conditional delete and the touch clock. */
export function sweepableContentOf(host: LifecycleHost): SweepableContentStore {
  const content = host.content;
  if (!content)
    throw new ConfigError(
      "sweep",
      "no content store is wired: pass { content }, the store execution.claimCheck writes to.",
    );
  if (!isSweepable(content)) {
    throw new ConfigError(
      "sweep",
      "the content store lacks deleteIfUntouchedSince or touchClock (ContentStore SPI 1.3.0): the sweep only ever deletes conditionally, " +
        "so a concurrent put survives. Use a store that implements both (memory, fs and IndexedDB stores do).",
    );
  }
  return content;
}

const progress = (ctx: InternalEffectContext, task: string, done: number, total?: number) =>
  ctx.host.bus.emit("progress", { task, done, ...(total === undefined ? {} : { total }) });

/** Opens the sealed records that cite something, when the app holds the keys; the rest stay as they are. */
async function openCiting(host: LifecycleHost, executionId: string, records: StoredRecord[]): Promise<StoredRecord[]> {
  const codec = host.codec;
  if (!codec) return records;
  const citing = records.filter((r) => isSealed(r) && (!Array.isArray(r.refs) || r.refs.length > 0));
  if (citing.length === 0) return records;
  const opened = new Map((await codec.open(executionId, citing)).map((r) => [r.seq, r]));
  return records.map((r) => opened.get(r.seq) ?? r);
}

/** Walks every history once, one execution at a time. */
async function buildIndex(ctx: InternalEffectContext): Promise<CitationIndex> {
  const { host } = ctx;
  const { events, trust } = host;
  const keys = host.sealingKeys;
  // Taken before any log is read: an offload in flight now is cited by an append the scan may miss, and the
  // append takes it out of `inflight` before the reclaim looks, so the reclaim spares what was in flight here.
  const index: CitationIndex = {
    pinned: new Set(),
    telemetry: new Map(),
    executions: 0,
    unknown: false,
    inflightAtScan: new Set(inflightOffloads.keys()),
  };
  const pin = (address: string) => {
    index.pinned.add(address);
    index.telemetry.delete(address);
  };
  const infos = await events.listExecutions();
  let done = 0;
  for (const info of infos) {
    progress(ctx, "sweep.scan", ++done, infos.length);
    if (isInternalLogic(info.logicId)) continue;
    // An erased subject's sealed history is unreadable data: it vouches for no blob (erasure kept what others cite).
    if (keys && info.subject !== undefined && (await keys.isDestroyed(info.subject))) continue;
    index.executions++;
    const { executionId } = info;
    for (const segment of await events.readArchives(executionId)) {
      if (citesUnknown(segment.records)) index.unknown = true;
      visitCitedAddresses(segment.records, pin, { pinAll: true });
    }
    const snapshot = await events.getSnapshot(executionId);
    if (snapshot) {
      if (citesUnknown(snapshot.state)) index.unknown = true;
      visitCitedAddresses(snapshot.state, pin, { pinAll: true });
    }
    let live: StoredRecord[];
    try {
      live = await openCiting(host, executionId, await events.read(executionId));
    } catch (error) {
      if (error instanceof ExecutionErasedError) continue;
      throw error;
    }
    if (citesUnknown(live)) index.unknown = true;
    const retainRoots = retainRootsOf(live, { trust });
    for (const record of live) {
      // A telemetry ref's TTL runs from its execution's end once it has ended (docs/adr/loom-0140-claim-check.md, D6).
      const citedAt = info.endedAt ?? record.at;
      visitCitedAddresses(
        record,
        (address, { loadBearing }) => {
          if (loadBearing) pin(address);
          else if (!index.pinned.has(address))
            index.telemetry.set(address, Math.max(index.telemetry.get(address) ?? -Infinity, citedAt));
        },
        { retainRoots, trust },
      );
    }
  }
  return index;
}

/** The index the scan built, or a fresh one when this process did not run the scan (a resumed sweep). */
function indexFor(ctx: InternalEffectContext): Promise<CitationIndex> {
  const indexes = ctx.host.state.sweepIndexes;
  let index = indexes.get(ctx.executionId);
  if (!index) {
    index = buildIndex(ctx);
    indexes.set(ctx.executionId, index);
    index.catch(() => indexes.delete(ctx.executionId));
  }
  return index;
}

/** FNV-1a of the address: which reclaim batch handles it (stable across processes and stores). */
export function sweepBatchOf(address: string, batches: number): number {
  return fnv1a32(address) % batches;
}

/** The sweep machine's internal effects. */
export const sweepEffects: Record<string, InternalEffect> = {
  [SWEEP_EFFECTS.begin]: {
    async run(_input: unknown, ctx): Promise<SweepBegun> {
      const content = sweepableContentOf(ctx.host);
      return { touchCutoff: await content.touchClock(), startedAt: ctx.host.clock.now() };
    },
  },
  [SWEEP_EFFECTS.scan]: {
    async run(_input: SweepBegun & SweepInput, ctx): Promise<SweepScanned> {
      ctx.host.state.sweepIndexes.delete(ctx.executionId);
      const index = await indexFor(ctx);
      return {
        executions: index.executions,
        cited: index.pinned.size + index.telemetry.size,
        pinned: index.pinned.size,
        unknownCitations: index.unknown,
      };
    },
  },
  [SWEEP_EFFECTS.reclaim]: {
    async run(input: SweepBatchInput, ctx): Promise<SweepBatch> {
      const content = sweepableContentOf(ctx.host);
      const index = await indexFor(ctx);
      const batch: SweepBatch = { scanned: 0, kept: 0, deleted: 0, spared: 0, bytesDeleted: 0 };
      for await (const info of content.list()) {
        const { address } = info;
        if (sweepBatchOf(address, input.batches) !== input.batch) continue;
        if (++batch.scanned % PROGRESS_EVERY === 0) progress(ctx, "sweep.reclaim", batch.scanned);
        const telemetryAt = index.telemetry.get(address);
        const cited =
          index.unknown ||
          index.pinned.has(address) ||
          (telemetryAt !== undefined && input.startedAt - telemetryAt < input.ttlMs);
        if (cited) batch.kept++;
        else if (
          info.touchedAt >= input.touchCutoff ||
          inflightOffloads.has(address) ||
          index.inflightAtScan.has(address)
        )
          batch.spared++;
        else if (await content.deleteIfUntouchedSince(address, input.touchCutoff)) {
          batch.deleted++;
          batch.bytesDeleted += info.size;
        } else batch.spared++;
      }
      progress(ctx, "sweep.reclaim", batch.scanned);
      if (input.batch === input.batches - 1) ctx.host.state.sweepIndexes.delete(ctx.executionId);
      return batch;
    },
  },
};

/** One sweep (sweep(app) joins a running one first: actors/lifecycle/joins.ts). */
export async function sweepOnce(host: LifecycleHost, options: SweepOptions): Promise<SweepResult> {
  const ttlMs = options?.ttlMs;
  if (typeof ttlMs !== "number" || !(ttlMs >= 0) || !Number.isFinite(ttlMs))
    throw new ConfigError("sweep.ttlMs", "a finite number of milliseconds >= 0.");
  const batches = options.batches ?? DEFAULT_SWEEP_BATCHES;
  if (!Number.isInteger(batches) || batches < 1) throw new ConfigError("sweep.batches", "a positive integer.");
  sweepableContentOf(host);
  const sweeps = (await host.events.listExecutions()).filter(
    (info) => info.logicId === SWEEP_LOGIC_ID && sweepNumber(info.executionId) !== undefined,
  );
  const unfinished = sweeps.find((info) => info.status === "running");
  if (unfinished) {
    await host.resume(unfinished.executionId, sweepMachine);
    return (await host.result(unfinished.executionId)) as SweepResult;
  }
  const numberOf = (executionId: string) => sweepNumber(executionId)!;
  const sweepId = sweepExecutionId(Math.max(0, ...sweeps.map((info) => numberOf(info.executionId))) + 1);
  const input: SweepInput & { sweepId: string } = { sweepId, ttlMs, batches };
  await host.start(sweepMachine, { executionId: sweepId, input });
  const result = (await host.result(sweepId)) as SweepResult;
  // Housekeeping: the newest sweep logs stay for audit.
  const finished = sweeps
    .filter((info) => info.status !== "running")
    .map((info) => info.executionId)
    .sort((a, b) => numberOf(a) - numberOf(b));
  for (const id of finished.slice(0, Math.max(0, finished.length + 1 - SWEEP_LOGS_KEPT))) await host.deleteHistory(id);
  return result;
}
