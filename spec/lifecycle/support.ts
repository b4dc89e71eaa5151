// Shared fixtures for the data-lifecycle suites: an agent app per configuration, a store that "dies"
// mid-erasure, and a scan of every byte the stores hold.
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp, type App } from "../../actors/app.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import { createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { EncryptingContentStore } from "../../stores/encryptingContentStore.js";
import { memoryStores } from "../../stores/memory.js";
import { ForwardingEventStore, SimulatedCrash } from "../support/harness.js";

export { SimulatedCrash };
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { ContentStore, EventStore, StoredRecord, StoredSnapshot, Stores } from "../../stores/types.js";

/** A per-subject marker that must be unreadable anywhere once the subject is erased. */
export const canaryOf = (subject: string) => `CANARY-${subject}-7f3a9c`;
/** Rows big enough (> 1 KiB) to be offloaded by the preset. */
export const rows = (tag: string, n = 40) => Array.from({ length: n }, (_, i) => ({ id: i, text: `${tag} row ${i}` }));

/** What a tool returns: per subject, so a test can plant outputs (a forged lookalike, say). */
export type Outputs = Map<string, unknown>;

export interface WorldOptions {
  /** The stores (default: fresh memory stores); the PostgreSQL suite passes its own. */
  stores?: Stores;
  /** security.crypto with an EncryptingContentStore as the claim-check store. */
  crypto?: boolean;
  /** Replace the claim-check store (e.g. one without deleteIfUntouchedSince). */
  content?: (stores: Stores) => ContentStore;
  events?: (stores: Stores) => EventStore;
  erase?: boolean;
  snapshotEvery?: number | false;
  clock?: LoomConfig["clock"];
  extra?: Partial<LoomConfig>;
  /** Runs before the model's final answer (turn 1): advance a clock, or park the run. */
  beforeAnswer?: (ctx: EffectContext) => Promise<void> | void;
}

export interface World {
  stores: Stores;
  /** The claim-check store (what the sweep and erasure delete from). */
  content: ContentStore;
  outputs: Outputs;
  options: WorldOptions;
  /** A fresh app over the same stores (a new process). */
  app(overrides?: { events?: EventStore; content?: ContentStore; extra?: Partial<LoomConfig> }): App;
}

const loop = (tools: string[]) =>
  agentLoop$({ id: `agent-${tools.join("-")}`, model: "model", tools, warnTranscriptBytes: false });

/** The tools: `fetch` (subject data with its canary), `shared` and `public2` (identical for every subject), `note` (unlisted). */
export function world(options: WorldOptions = {}): World {
  const stores = options.stores ?? memoryStores();
  const content = options.content
    ? options.content(stores)
    : options.crypto
      ? new EncryptingContentStore(stores.content, stores.keys)
      : stores.content;
  const outputs: Outputs = new Map();
  const effects = {
    model: createLlmEffect({
      id: "test",
      async generate(request, ctx) {
        const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
        if (turn === 0) return { toolCalls: request.tools.map((tool) => ({ toolName: tool.name, input: {} })) };
        await options.beforeAnswer?.(ctx);
        return { text: "done" };
      },
    }),
    fetch: createToolEffect(async (_input: unknown, ctx) => ({
      owner: ctx.subject,
      canary: canaryOf(String(ctx.subject)),
      rows: rows(`fetch ${ctx.subject}`),
    })),
    shared: createToolEffect(async () => ({ dataset: "public", rows: rows("shared") })),
    public2: createToolEffect(async () => ({ dataset: "public2", rows: rows("public2") })),
    telemetry: createToolEffect(async (_input: unknown, ctx) => ({ trace: rows(`trace ${ctx.executionId}`) })),
    note: createToolEffect(async (_input: unknown, ctx) => outputs.get(String(ctx.subject)) ?? { note: "none" }),
  };
  const build = (events: EventStore, store: ContentStore, extra: Partial<LoomConfig> = {}) =>
    createApp(
      defineConfig({
        stores: { ...stores, events },
        effects,
        logics: [
          loop(["fetch"]),
          loop(["fetch", "shared"]),
          loop(["fetch", "public2"]),
          loop(["public2"]),
          loop(["shared"]),
          loop(["note"]),
          loop(["telemetry"]),
          loop(["fetch", "note"]),
        ],
        execution: {
          snapshotEvery: options.snapshotEvery ?? 4,
          claimCheck: { store, toolIds: ["fetch", "shared", "public2", "telemetry"], reclaimable: ["telemetry"] },
        },
        ...(options.crypto ? { security: { crypto: { keys: stores.keys } } } : {}),
        compliance: { erase: options.erase ?? true },
        ...(options.clock ? { clock: options.clock } : {}),
        ...options.extra,
        ...extra,
      } as LoomConfig),
    );
  const events = options.events ? options.events(stores) : stores.events;
  return {
    stores,
    content,
    outputs,
    options,
    app: (overrides = {}) => build(overrides.events ?? events, overrides.content ?? content, overrides.extra),
  };
}

/** Runs an agent that calls each tool once, then answers; resolves when it ends. */
export async function runAgent(
  app: App,
  executionId: string,
  subject: string | undefined,
  tools: string[],
): Promise<void> {
  await app.start(loop(tools), {
    executionId,
    ...(subject === undefined ? {} : { subject }),
    input: { prompt: `work for ${subject ?? "nobody"}` },
  });
  await app.result(executionId);
}

/** The addresses an execution's tool steps offloaded, by effect id. */
export async function offloaded(app: App, executionId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const record of await app.log(executionId)) {
    if (record.type !== STEP_COMPLETED || record.effectId === "model") continue;
    const output = record.output as { ref?: { __loomContent?: string }; value?: { ref?: { __loomContent?: string } } };
    const address = output?.ref?.__loomContent ?? output?.value?.ref?.__loomContent;
    if (address) out[String(record.effectId)] = address;
  }
  return out;
}

/** Every record, archive segment, snapshot and catalogue entry as text, and every blob's raw bytes as latin1. */
export async function everything(stores: Stores): Promise<string> {
  const parts: string[] = [];
  for (const info of await stores.events.listExecutions()) {
    parts.push(JSON.stringify(info));
    parts.push(JSON.stringify(await stores.events.read(info.executionId)));
    parts.push(JSON.stringify(await stores.events.readArchives(info.executionId)));
    parts.push(JSON.stringify((await stores.events.getSnapshot(info.executionId)) ?? null));
  }
  for await (const info of stores.content.list()) {
    const bytes = await stores.content.get(info.address);
    parts.push(Buffer.from(bytes ?? new Uint8Array()).toString("latin1"));
  }
  return parts.join("\n");
}

export interface CrashPlan {
  /** Appends to executions whose id starts with this prefix are counted. */
  prefix: string;
  /** Die at the k-th counted append (1-based)... */
  at?: number;
  /** ...before it reaches the store, or after it is durable. */
  mode?: "before" | "after";
  /** Called once, right after the first durable append that holds a record of this type. */
  after?: { type: string; run: () => Promise<void>; fired: boolean };
}

/** An EventStore over `inner` that counts the appends of one kind of execution and dies at the k-th (then refuses every write). */
export class CrashingEvents extends ForwardingEventStore {
  counted = 0;
  dead = false;
  constructor(
    inner: EventStore,
    private readonly plan: CrashPlan,
  ) {
    super(inner);
  }
  private check(): void {
    if (this.dead) throw new SimulatedCrash("the process is dead");
  }
  override async append(id: string, expected: number, records: StoredRecord[]) {
    this.check();
    const counted = id.startsWith(this.plan.prefix);
    if (counted) this.counted++;
    const dies = counted && this.plan.at === this.counted;
    if (dies && this.plan.mode === "before") {
      this.dead = true;
      throw new SimulatedCrash(`died before append ${this.counted} of ${id}`);
    }
    await this.inner.append(id, expected, records);
    const hook = this.plan.after;
    if (hook && !hook.fired && records.some((r) => r.type === hook.type)) {
      hook.fired = true;
      await hook.run();
    }
    if (dies) {
      this.dead = true;
      throw new SimulatedCrash(`died after append ${this.counted} of ${id}`);
    }
  }
  override async putSnapshot(id: string, snapshot: StoredSnapshot) {
    this.check();
    return this.inner.putSnapshot(id, snapshot);
  }
  override async archive(id: string, through: number) {
    this.check();
    return this.inner.archive(id, through);
  }
  override async deleteHistory(id: string) {
    this.check();
    return this.inner.deleteHistory(id);
  }
}

/** Resolves with what a promise rejected with (fails if it resolved). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
