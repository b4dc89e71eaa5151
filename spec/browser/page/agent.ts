// The agent half of the browser harness page: an agentLoop$ run entirely in the tab on indexedDbStores,
// on the seeded workload (spec/support/workload.ts). Every model and tool call is counted per step id
// in localStorage, which a reload does not clear and IndexedDB does not hold, so a test can prove that
// a resumed run re-ran nothing recorded; and, when the test exposes the `loomReport` binding (the
// harness does), reported to the test process before the call runs, with every record the app saw
// acknowledged, so the counts and acknowledgements outlive a SIGKILL of the browser itself (localStorage
// is written to disk lazily and would not). A model or tool step can be held open until released.
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  expandRecords,
  scriptedModel,
  type App,
  type Effect,
  type StoredRecord,
  type ReplayReport,
} from "../../../index.js";
import type { IndexedDbStores, WriterLease } from "../../../adapters/indexeddb/index.js";
import { toolOutput, workloadReply } from "../../support/workload.js";

/** Serialisable options of one run; the same `turns` must be given to `start` and `resume`. */
export interface AgentRun {
  db: string;
  executionId: string;
  turns: number;
  /**
   * Run on stores that offer `acquireWriter`, so the runtime holds the execution's Web Lock from start or
   * resume until it ends. Without it the app gets stores with no lock and only the seq fence guards the log.
   */
  lock?: boolean;
  /**
   * Pads every tool output with this many KiB of incompressible text (the same for a given step), so an
   * append takes the browser long enough to commit that a kill can land while it does.
   */
  toolOutputKb?: number;
}

/** What the page tells the test process through the `loomReport` binding, when one is exposed. */
export type PageReport =
  | { kind: "call"; db: string; stepId: string }
  | { kind: "ack"; db: string; executionId: string; records: StoredRecord[] };

declare global {
  interface Window {
    loomReport?: (report: PageReport) => Promise<void>;
  }
}

type Settle = <T>(
  work: Promise<T> | (() => Promise<T>),
) => Promise<
  { ok: true; value: T } | { ok: false; error: { name: string; code?: string; reason?: string; message: string } }
>;

const LOOP_ID = "agent";
const held = new Set<string>();
const gates = new Map<string, () => void>();
const apps = new Map<string, App>();
const outcomes = new Map<string, Promise<unknown>>();

const callsKey = (db: string) => `loomwork-calls:${db}`;

/**
 * Counts a live call of `stepId` before the call runs: in localStorage, and in the test process, whose
 * count is in hand before the call starts (the binding's reply is awaited).
 */
async function countCall(db: string, stepId: string): Promise<void> {
  const calls = readCalls(db);
  calls[stepId] = (calls[stepId] ?? 0) + 1;
  localStorage.setItem(callsKey(db), JSON.stringify(calls));
  await window.loomReport?.({ kind: "call", db, stepId });
}

/** Held until released (or until the page or the browser goes away: the run "dies" right here). */
async function gate(stepId: string): Promise<void> {
  if (!held.has(stepId)) return;
  await new Promise<void>((release) => gates.set(stepId, release));
  gates.delete(stepId);
}

function readCalls(db: string): Record<string, number> {
  return JSON.parse(localStorage.getItem(callsKey(db)) ?? "{}") as Record<string, number>;
}

function loopOf(turns: number) {
  return agentLoop$({ id: LOOP_ID, model: "model", tools: ["search"], maxTurns: turns, warnTranscriptBytes: false });
}

/** `kb` KiB of base-36 text from a seeded xorshift: the same for a seed, and no compressor shrinks it. */
function padding(seed: number, kb: number): string {
  let x = seed * 2_654_435_761 + 1;
  let text = "";
  for (let i = 0; i < kb * 1024; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    text += ((x >>> 0) % 36).toString(36);
  }
  return text;
}

function effectsFor(db: string, turns: number, toolOutputKb = 0): Record<string, Effect> {
  const llm = createLlmEffect(scriptedModel(workloadReply(turns)));
  return {
    model: {
      ...llm,
      run: async (input, ctx) => {
        await countCall(db, ctx.stepId);
        await gate(ctx.stepId);
        return llm.run(input, ctx);
      },
    },
    search: createToolEffect(async (_input: unknown, ctx) => {
      await countCall(db, ctx.stepId);
      await gate(ctx.stepId);
      const turn = Number(/turn:(\d+):tool/.exec(ctx.stepId)?.[1]);
      return toolOutputKb > 0
        ? { ...toolOutput(42, turn), padding: padding(turn + 1, toolOutputKb) }
        : toolOutput(42, turn);
    }),
  };
}

/** `window.loom.agent`: drives agent runs on IndexedDB from page.evaluate. */
export function createAgentDriver(storesOf: (db: string) => Promise<IndexedDbStores>, settle: Settle) {
  async function appFor(run: AgentRun): Promise<App> {
    const key = `${run.db}:${run.lock ? "locked" : "fence-only"}`;
    let app = apps.get(key);
    if (!app) {
      const { acquireWriter, ...fenceOnly } = await storesOf(run.db);
      const stores = run.lock ? { ...fenceOnly, acquireWriter } : fenceOnly;
      app = createApp(
        defineConfig({
          stores,
          effects: effectsFor(run.db, run.turns, run.toolOutputKb),
          logics: [loopOf(run.turns)],
          execution: { snapshotEvery: 8 },
        }),
      );
      // Not awaited: an acknowledgement the browser's death cuts off before it reaches the test was never seen.
      app.on(
        "append",
        ({ executionId, records }) =>
          void window.loomReport?.({ kind: "ack", db: run.db, executionId, records }).catch(() => undefined),
      );
      apps.set(key, app);
    }
    return app;
  }

  // The runtime takes and releases the writer lock itself (Stores.acquireWriter); nothing to hold here.
  async function leaseFor(_run: AgentRun): Promise<WriterLease | undefined> {
    return undefined;
  }

  // The outcome is kept (not awaited) so a test can await it later, or reload while it is pending.
  function track(run: AgentRun, app: App, lease: WriterLease | undefined): void {
    const outcome = app.result(run.executionId).finally(() => lease?.release());
    outcome.catch(() => undefined);
    outcomes.set(`${run.db}/${run.executionId}`, outcome);
  }

  return {
    LOOP_ID,

    /** Holds every model or tool call of these step ids open until `release` (e.g. `agent#turn:3:tool:0`). */
    hold(stepIds: string[]): void {
      for (const id of stepIds) held.add(id);
    },

    /** Step ids whose model or tool call is running and held. */
    holding(): string[] {
      return [...gates.keys()];
    },

    release(stepId: string): void {
      held.delete(stepId);
      gates.get(stepId)?.();
    },

    /** Starts a run; resolves once EXECUTION_STARTED is journaled (not when the run ends). */
    start(run: AgentRun) {
      return settle(async () => {
        const app = await appFor(run);
        const lease = await leaseFor(run);
        try {
          await app.start(loopOf(run.turns), { executionId: run.executionId, input: { prompt: "research barn owls" } });
        } catch (error) {
          await lease?.release();
          throw error;
        }
        track(run, app, lease);
        return null;
      });
    },

    /** Resumes a run from IndexedDB in this page's app; resolves with what the replay did. */
    resume(run: AgentRun) {
      return settle(async (): Promise<ReplayReport> => {
        const app = await appFor(run);
        const lease = await leaseFor(run);
        try {
          const actor = await app.resume(run.executionId);
          track(run, app, lease);
          return actor.replay;
        } catch (error) {
          await lease?.release();
          throw error;
        }
      });
    },

    /** The run's output once it ends (or its error). */
    result(db: string, executionId: string) {
      const outcome = outcomes.get(`${db}/${executionId}`);
      return settle(
        outcome ?? Promise.reject(new Error(`no run of "${executionId}" was started or resumed in this page`)),
      );
    },

    /** Live model and tool calls per step id on database `db`, across reloads. */
    calls(db: string): Record<string, number> {
      return readCalls(db);
    },

    /** The execution's journal as IndexedDB holds it, read back as app.log and the append acknowledgements show it (schema 3's stored form expanded). */
    async log(db: string, executionId: string): Promise<StoredRecord[]> {
      return expandRecords(await (await storesOf(db)).events.read(executionId));
    },
  };
}

export type AgentDriver = ReturnType<typeof createAgentDriver>;
