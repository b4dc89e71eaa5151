// The deterministic simulator of campaign 4. One seed fixes everything: a seeded scheduler picks each
// next action (advance the simulated clock, send an event, arm a storage fault, restart the app,
// resume a failed execution, erase a subject, sweep the content store), tools fail and take time by the
// same seed, and the event store throws, loses acknowledgements or stalls on command. The app seals
// records (security.crypto) and claim-checks tool outputs into an EncryptingContentStore, so erasure and
// the sweep run for real. Memory stores, the simulated clock and a deterministic WebCrypto (seeded
// randomness, results delivered in call order) leave no other source of nondeterminism, so a seed
// replays to the same trace and the same journals: `traceHash`.
import type { AnyStateMachine } from "xstate";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { appInternals, createApp } from "../../actors/app.js";
import { simulatedClock, type SimulatedClock } from "../../index.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { EncryptingContentStore } from "../../stores/encryptingContentStore.js";
import { memoryStores } from "../../stores/memory.js";
import { forgetRecordKeys } from "../../stores/recordSealing.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { EventStore, StoredRecord, Stores } from "../../stores/types.js";
import { demoMachine } from "../support/demoMachine.js";
import { prng } from "../support/workload.js";
import { contiguous, duplicateOutcomes, sha256 } from "./support.js";
import { eraseSubject, sweep } from "../../lifecycle.js";

/**
 * A storage fault the scheduler arms for the next append(s). `stall-cited` holds the next append whose
 * records cite a claim-checked blob (its STEP_COMPLETED): its blob is in the content store, no record cites
 * it yet, and the scheduler sweeps while it is held (the sweep's in-flight tracking must keep the blob).
 */
export type Fault = "refuse" | "lost-ack" | "stall" | "read" | "stall-cited";
export const FAULTS: readonly Fault[] = ["refuse", "lost-ack", "stall", "read", "stall-cited"];

/** True when a record (sealed or not) cites a claim-checked blob: its readable `refs`. */
const citesContent = (record: StoredRecord) => Array.isArray(record.refs) && record.refs.length > 0;

/** Thrown by the faulting store: an I/O error of the simulated disk. */
export class SimulatedStorageError extends Error {
  readonly code = "SIM_IO";
}

/** One simulated process: an app runs in it; `kill()` is a crash (nothing it started lands later). */
class Process {
  dead = false;
  private waiters: (() => void)[] = [];
  kill(): void {
    this.dead = true;
    for (const wake of this.waiters.splice(0)) wake();
  }
  died(): Promise<void> {
    return this.dead ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
  check(what: string): void {
    if (this.dead) throw new SimulatedStorageError(`${what}: the process is dead`);
  }
}

/** A store seen from one process: once the process is dead, every call fails (it never reaches the disk). */
function viewOf<T extends object>(store: T, owner: Process): T {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function" || property === "list")
        return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        if (owner.dead) return Promise.reject(new SimulatedStorageError(`${String(property)}: the process is dead`));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * An EventStore over the memory store that fails on command: `refuse` throws before writing, `lost-ack`
 * writes and then throws (the caller never learns the append landed), `stall` holds the append until
 * the simulated clock passes a delay (if its process dies first, the append lands or not, by the seed,
 * at that instant), `read` fails the next read (a resume then fails).
 */
class FaultingEventStore implements EventStore {
  readonly spiVersion: string;
  faults: Fault[] = [];
  injected = 0;
  /** Injected faults by kind. */
  readonly kinds = Object.fromEntries(FAULTS.map((kind) => [kind, 0])) as Record<Fault, number>;
  /** Appends citing a blob that `stall-cited` holds right now. */
  heldCited = 0;
  /** Every call, for the scheduler's quiescence check. */
  calls = 0;

  constructor(
    private readonly inner: EventStore,
    private readonly clock: SimulatedClock,
    private readonly note: (line: string) => void,
    private readonly seed: number,
  ) {
    this.spiVersion = inner.spiVersion;
  }

  /** The store as one process sees it. */
  forProcess(owner: Process): EventStore {
    const view = viewOf<EventStore>(this, owner);
    return new Proxy(view, {
      get: (target, property) =>
        property === "append"
          ? (executionId: string, expectedSeq: number, records: StoredRecord[]) =>
              owner.dead
                ? Promise.reject(new SimulatedStorageError("append: the process is dead"))
                : this.appendFrom(owner, executionId, expectedSeq, records)
          : Reflect.get(target, property, target),
    });
  }

  append(executionId: string, expectedSeq: number, records: StoredRecord[]): Promise<void> {
    return this.appendFrom(new Process(), executionId, expectedSeq, records);
  }

  private async appendFrom(
    owner: Process,
    executionId: string,
    expectedSeq: number,
    records: StoredRecord[],
  ): Promise<void> {
    this.calls++;
    // `stall-cited` waits in the queue for an append that cites a blob; the others apply to the next append
    // (a `read` to the next read), in the order they were armed.
    const cited = this.faults.indexOf("stall-cited");
    const next = this.nextFault();
    const fault =
      cited >= 0 && records.some(citesContent)
        ? this.faults.splice(cited, 1)[0]
        : next >= 0 && this.faults[next] !== "read"
          ? this.faults.splice(next, 1)[0]
          : undefined;
    if (fault) {
      this.injected++;
      this.kinds[fault]++;
      this.note(`fault ${fault} append ${executionId}@${expectedSeq}`);
    }
    if (fault === "refuse") throw new SimulatedStorageError(`refused append to ${executionId} at ${expectedSeq}`);
    if (fault === "stall" || fault === "stall-cited") {
      let cancel = () => undefined as void;
      if (fault === "stall-cited") this.heldCited++;
      await Promise.race([
        new Promise<void>((resolve) => (cancel = this.clock.setTimer(resolve, 250))),
        owner.died(),
      ]).finally(() => {
        if (fault === "stall-cited") this.heldCited--;
      });
      cancel();
      if (owner.dead) {
        // The crash came while the write was in flight: it reached the disk or it did not, never later.
        const lands = keyed(this.seed, `lands ${executionId}@${expectedSeq}`)() < 0.5;
        this.note(`crash during a stalled append to ${executionId}@${expectedSeq}: ${lands ? "it landed" : "lost"}`);
        if (lands) await this.inner.append(executionId, expectedSeq, records);
        throw new SimulatedStorageError("the process died during the append");
      }
    }
    await this.inner.append(executionId, expectedSeq, records);
    if (fault === "lost-ack")
      throw new SimulatedStorageError(`append to ${executionId} at ${expectedSeq} landed, its ack was lost`);
  }

  /** The first armed fault that is not waiting for a citing append. */
  private nextFault(): number {
    return this.faults.findIndex((fault) => fault !== "stall-cited");
  }

  async read(executionId: string, fromSeq?: number): Promise<StoredRecord[]> {
    this.calls++;
    const next = this.nextFault();
    if (next >= 0 && this.faults[next] === "read") {
      this.faults.splice(next, 1);
      this.injected++;
      this.kinds.read++;
      this.note(`fault read ${executionId}`);
      throw new SimulatedStorageError(`read of ${executionId} failed`);
    }
    return this.inner.read(executionId, fromSeq);
  }

  head = (id: string) => this.inner.head(id);
  getExecution = (id: string) => this.inner.getExecution(id);
  listExecutions = () => this.inner.listExecutions();
  putSnapshot = (id: string, snapshot: Parameters<EventStore["putSnapshot"]>[1]) =>
    this.inner.putSnapshot(id, snapshot);
  getSnapshot = (id: string) => this.inner.getSnapshot(id);
  archive = (id: string, through: number) => this.inner.archive(id, through);
  readArchives = (id: string) => this.inner.readArchives(id);
  deleteHistory = (id: string) => this.inner.deleteHistory(id);
}

/** A PRNG keyed by text: the same (seed, key) always draws the same numbers, whatever ran before. */
function keyed(seed: number, key: string): () => number {
  let h = seed >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return prng(h);
}

export interface SimulationOptions {
  seed: number;
  executions?: number;
  steps?: number;
}

export interface SimulationResult {
  seed: number;
  traceHash: string;
  trace: string[];
  violations: string[];
  faults: number;
  /** Injected faults by kind (they sum to `faults`). */
  faultKinds: Record<Fault, number>;
  restarts: number;
  records: number;
  erasures: number;
  sweeps: number;
  /** Sweeps run while an append citing a claim-checked blob was held in flight (`stall-cited`). */
  inflightSweeps: number;
}

/**
 * Makes WebCrypto deterministic while a simulation runs: randomness (keys, IVs) comes from the seed, and
 * every SubtleCrypto result is delivered in call order, each in a turn of its own, so real threadpool
 * timing never decides which continuation runs first. `pending()` counts results not yet delivered.
 */
export function deterministicCrypto(seed: number): { pending(): number; restore(): void } {
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, "crypto")!;
  const real = globalThis.crypto;
  const random = prng(seed ^ 0x5eed5eed);
  let chain: Promise<unknown> = Promise.resolve();
  let pending = 0;
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const inflight = new Map<number, string>();
  let opIds = 0;
  const ordered = (name: string, work: () => Promise<unknown>): Promise<unknown> => {
    pending++;
    const opId = ++opIds;
    inflight.set(opId, name);
    let started: Promise<unknown>;
    try {
      started = Promise.resolve(work());
    } catch (error) {
      started = Promise.reject(error);
    }
    started.catch(() => undefined);
    const delivered = chain.then(async () => {
      try {
        return await started;
      } finally {
        await nextTurn();
      }
    });
    chain = delivered.catch(() => undefined);
    return delivered.finally(() => {
      pending--;
      inflight.delete(opId);
    });
  };
  const subtle = new Proxy(real.subtle, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function"
        ? (...args: unknown[]) =>
            ordered(String(property), () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args))
        : value;
    },
  });
  const fake = {
    subtle,
    getRandomValues<T extends ArrayBufferView | null>(array: T): T {
      if (array) {
        const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
        for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
      }
      return array;
    },
    randomUUID: () =>
      `00000000-0000-4000-8000-${Math.floor(random() * 2 ** 48)
        .toString(16)
        .padStart(12, "0")}`,
  };
  Object.defineProperty(globalThis, "crypto", { value: fake, configurable: true, enumerable: true, writable: true });
  (globalThis as { __simInflight?: unknown }).__simInflight = inflight;
  return { pending: () => pending, restore: () => Object.defineProperty(globalThis, "crypto", descriptor) };
}

export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  // A record key cached by an earlier run would save this run some WebCrypto calls, and so change its order.
  forgetRecordKeys();
  const crypto = deterministicCrypto(options.seed);
  try {
    return await run(options, crypto.pending);
  } finally {
    crypto.restore();
  }
}

const ERASABLE = "subject-1";

async function run(options: SimulationOptions, cryptoPending: () => number): Promise<SimulationResult> {
  const { seed } = options;
  const random = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const trace: string[] = [];
  const note = (line: string) => {
    trace.push(line);
    if (process.env.SIM_DEBUG) console.log(`  [sim] ${line}`);
  };
  const violations: string[] = [];
  const clock = simulatedClock(1_700_000_000_000);
  const base = memoryStores();
  const faulting = new FaultingEventStore(base.events, clock, note, seed);
  const runs = new Map<string, number>();
  let runCount = 0;
  const runsTotal = () => runCount;
  const applied: string[] = [];

  const turnsOf = (id: string) => 2 + (Number(id.slice(1)) % 3);
  const agentReply = (turns: number) => (_request: unknown, call: number) =>
    call < turns - 1
      ? {
          toolCalls: Array.from({ length: 1 + (call % 2) }, (_, j) => ({
            toolName: "search",
            input: { q: `q${call}.${j}` },
          })),
        }
      : { text: `answer after ${turns} turns` };
  const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimer(resolve, ms));
  // Every live run is counted per idempotency key, and must not start once its outcome is journaled.
  const counted = async (ctx: { idempotencyKey: string; executionId: string; stepId: string }): Promise<number> => {
    const n = (runs.get(ctx.idempotencyKey) ?? 0) + 1;
    runs.set(ctx.idempotencyKey, n);
    runCount++;
    const recorded = (await base.events.read(ctx.executionId)).some(
      (r) => (r.type === STEP_COMPLETED || r.type === STEP_FAILED) && r.stepId === ctx.stepId,
    );
    if (recorded) violations.push(`${ctx.idempotencyKey} ran again (run ${n}) after its outcome was journaled`);
    return n;
  };
  // A tool: takes 0-400 ms of simulated time, fails one run in five, and on success applies its side
  // effect (keyed by the idempotency key) before answering.
  const tool = (name: string, owner: Process): Effect =>
    createToolEffect(async (input: unknown, ctx) => {
      owner.check(`tool ${name}`);
      const n = await counted(ctx);
      const draw = keyed(seed, `${ctx.idempotencyKey}#${n}`);
      await sleep(Math.floor(draw() * 400));
      // A crashed process applies nothing after its death.
      owner.check(`tool ${name}`);
      if (draw() < 0.2) throw new Error(`${name} failed (simulated, run ${n})`);
      applied.push(ctx.idempotencyKey);
      // Over the claim-check's 1 KiB inline cap: an agent's search results go to the content store.
      return {
        name,
        input,
        run: n,
        rows: Array.from({ length: 30 }, (_, i) => `${ctx.idempotencyKey} row ${i}: ${"data ".repeat(8)}`),
      };
    });
  const model = (turns: number, owner: Process): Effect => {
    const llm = createLlmEffect(scriptedModel(agentReply(turns)));
    return { ...llm, run: async (input, ctx) => (owner.check("model"), await counted(ctx), llm.run(input, ctx)) };
  };
  const agents = new Map<number, AnyStateMachine>();
  const agentFor = (turns: number) => {
    let loop = agents.get(turns);
    if (!loop)
      agents.set(
        turns,
        (loop = agentLoop$({
          id: `sim-agent-${turns}`,
          model: `model${turns}`,
          tools: ["search"],
          maxTurns: turns,
          warnTranscriptBytes: false,
        })),
      );
    return loop;
  };
  const logics = [demoMachine, agentFor(2), agentFor(3), agentFor(4)];
  let proc = new Process();
  const makeApp = () => {
    const stores: Stores = {
      events: faulting.forProcess(proc),
      content: viewOf(base.content, proc),
      keys: viewOf(base.keys, proc),
    };
    const effects: Record<string, Effect> = {
      search: tool("search", proc),
      research: tool("research", proc),
      write: tool("write", proc),
    };
    for (const turns of [2, 3, 4]) effects[`model${turns}`] = model(turns, proc);
    return createApp(
      defineConfig({
        stores,
        effects,
        clock,
        logics,
        execution: {
          snapshotEvery: 5,
          claimCheck: { store: new EncryptingContentStore(stores.content, stores.keys), toolIds: ["search"] },
        },
        security: { crypto: { keys: stores.keys } },
        compliance: { erase: true },
      }),
    );
  };

  const count = options.executions ?? 6;
  const ids = Array.from({ length: count }, (_, i) => `x${i}`);
  // Agents and demos of both subjects: x0 x1 x4 x5 are subject-0's, x2 x3 subject-1's (the one that may be erased).
  const subjects = new Map(ids.map((id, i) => [id, `subject-${Math.floor(i / 2) % 2}`]));
  const isAgent = (id: string) => Number(id.slice(1)) % 2 === 0;
  const world = { app: makeApp() };
  let erasures = 0;
  let sweeps = 0;
  let inflightSweeps = 0;
  let eraseRequested = false;

  // Drains every promise the last action set off. Nothing waits on real I/O or real timers, and WebCrypto
  // results arrive one per turn in call order: a few quiet turns with no crypto pending are the fixed point.
  const flush = async () => {
    let last = -1;
    const started = Date.now();
    for (let quiet = 0, turns = 0; quiet < 3; turns++) {
      // Real WebCrypto work may take a while on a busy thread pool: only turns without it count.
      if (cryptoPending() > 0) turns--;
      if (turns >= 5_000 || Date.now() - started > 10_000) {
        throw new Error(
          `flush: no fixed point after ${turns} turns (crypto pending ${cryptoPending()}: ${JSON.stringify([...((globalThis as { __simInflight?: Map<number, string> }).__simInflight ?? new Map())])})`,
        );
      }
      await new Promise((resolve) => setImmediate(resolve));
      const now = faulting.calls + runsTotal();
      quiet = now === last && cryptoPending() === 0 ? quiet + 1 : 0;
      last = now;
    }
  };
  // Starts `work` and runs the world to its fixed point: what is not done by then waits for the clock
  // (a stalled append, a retry's backoff) and finishes after a later advance.
  const attempt = async (what: string, work: () => Promise<unknown>) => {
    work().then(
      () => note(`${what}: ok`),
      (error: unknown) => note(`${what}: ${(error as Error).name} ${(error as { code?: string }).code ?? ""}`),
    );
    await flush();
  };
  const ended = async (id: string) => (await base.events.getExecution(id))?.status !== "running";
  const exists = async (id: string) => (await base.events.head(id)) > 0;
  const erased = (id: string) => base.keys.isDestroyed(subjects.get(id)!);
  const ensureRunning = async (id: string) => {
    if (await erased(id)) return;
    if (!(await exists(id))) {
      const input = isAgent(id) ? { prompt: `question ${id}` } : { topic: `topic ${id}` };
      await attempt(`start ${id}`, () =>
        world.app.start(isAgent(id) ? agentFor(turnsOf(id)) : demoMachine, {
          executionId: id,
          subject: subjects.get(id)!,
          input,
        }),
      );
      return;
    }
    const live = appInternals(world.app).execution(id);
    if ((live && !live.failure) || (await ended(id))) return;
    await attempt(`resume ${id}`, () => world.app.resume(id));
  };
  let restarts = 0;
  // A restart is a crash of the process: what it had in flight lands or is lost now, never later.
  const restart = async () => {
    restarts++;
    proc.kill();
    await flush();
    await world.app.close();
    proc = new Process();
    world.app = makeApp();
    note("restart");
  };

  for (let step = 0; step < (options.steps ?? 40); step++) {
    const roll = random();
    if (roll < 0.3) {
      const ms = Math.floor(random() * 700);
      note(`advance ${ms}`);
      clock.advance(ms);
    } else if (roll < 0.45) {
      await ensureRunning(pick(ids));
    } else if (roll < 0.55) {
      const id = pick(ids.filter((x) => !isAgent(x)));
      const live = appInternals(world.app).execution(id);
      if (live && !live.failure && !live.ended && live.state?.snapshot.value === "waiting") {
        const event = random() < 0.7 ? "APPROVE" : "REJECT";
        note(`send ${event} ${id}`);
        live.send({ type: event }).catch(() => undefined);
      }
    } else if (roll < 0.7) {
      const fault = pick(FAULTS);
      faulting.faults.push(fault);
      note(`arm ${fault}`);
    } else if (roll < 0.8) {
      await restart();
    } else if (roll < 0.9) {
      for (const id of ids) await ensureRunning(id);
    } else if (roll < 0.94) {
      eraseRequested = true;
      erasures++;
      await attempt(`erase ${ERASABLE}`, () => eraseSubject(world.app, ERASABLE));
    } else {
      const ttlMs = pick([0, 500, 60_000]);
      sweeps++;
      await attempt(`sweep ttl ${ttlMs}`, () => sweep(world.app, { ttlMs }));
    }
    await flush();
    // A claim-checked blob is put and the append that cites it is held: sweep now, with nothing spared by
    // its age. Only the sweep's tracking of in-flight offloads keeps the blob the journal will cite.
    if (faulting.heldCited > 0) {
      sweeps++;
      inflightSweeps++;
      await attempt("sweep ttl 0 while a citing append is in flight", () => sweep(world.app, { ttlMs: 0 }));
    }
  }

  // Settle: no more faults; finish a requested erasure; restart, resume, advance and approve until every
  // execution (of a subject not erased) has ended; then a last sweep.
  faulting.faults = [];
  // Runs `work` to its end, moving the clock while it waits (a stalled append of an earlier attempt
  // may hold it); gives up after 20 rounds.
  const drive = async (work: Promise<unknown>): Promise<string> => {
    let outcome: string | undefined;
    void work.then(
      () => (outcome = "ok"),
      (error: unknown) => (outcome = `${(error as Error).name}: ${(error as Error).message}`),
    );
    for (let round = 0; round < 20 && outcome === undefined; round++) {
      await flush();
      if (outcome === undefined) clock.advance(300);
    }
    await flush();
    return outcome ?? "still running after 20 rounds";
  };
  const settle = async (what: string, work: () => Promise<unknown>) => {
    for (let tries = 0; tries < 5; tries++) {
      const outcome = await drive(work());
      note(`${what}: ${outcome}`);
      if (outcome === "ok") return;
      await restart();
    }
    violations.push(`${what} never completed`);
  };
  if (eraseRequested) await settle(`finish erasing ${ERASABLE}`, () => eraseSubject(world.app, ERASABLE));
  const done = async (id: string) => (await erased(id)) || ((await exists(id)) && (await ended(id)));
  for (let round = 0; round < 60; round++) {
    if ((await Promise.all(ids.map(done))).every(Boolean)) break;
    if (round % 10 === 9) await restart();
    for (const id of ids) await ensureRunning(id);
    await flush();
    for (const id of ids) {
      const live = appInternals(world.app).execution(id);
      if (live && !live.failure && !live.ended && live.state?.snapshot.value === "waiting")
        live.send({ type: "APPROVE" }).catch(() => undefined);
    }
    clock.advance(1_000);
    await flush();
  }

  await settle("final sweep", () => sweep(world.app, { ttlMs: 0 }));
  await flush();

  // Invariants over the final journals.
  let records = 0;
  const journals: Record<string, StoredRecord[]> = {};
  for (const info of await base.events.listExecutions())
    journals[info.executionId] = await base.events.read(info.executionId);
  const isErased = new Map(await Promise.all(ids.map(async (id) => [id, await erased(id)] as const)));
  for (const id of ids) {
    const log = journals[id] ?? [];
    records += log.length;
    if (!contiguous(log)) violations.push(`${id}: seqs not contiguous`);
    for (const stepId of duplicateOutcomes(log)) violations.push(`${id}: step ${stepId} has two outcomes`);
    if (isErased.get(id)) {
      // Erasure complete: every blob the subject's records cite (readable `refs` of sealed records) is gone.
      for (const r of log)
        for (const address of (r.refs as string[] | undefined) ?? [])
          if (await base.content.has(address)) violations.push(`${id}: erased subject's blob ${address} survived`);
      continue;
    }
    if (log.length === 0) violations.push(`${id} never started`);
    if (log.at(-1)?.type !== EXECUTION_ENDED) violations.push(`${id} did not end (last record ${log.at(-1)?.type})`);
    if (!contiguous(log)) violations.push(`${id}: seqs not contiguous`);
    for (const stepId of duplicateOutcomes(log)) violations.push(`${id}: step ${stepId} has two outcomes`);
    for (const r of log) {
      if (r.type !== STEP_COMPLETED && r.type !== STEP_FAILED) continue;
      const key = `${id}/${r.stepId as string}`;
      if (!runs.has(key)) violations.push(`${key} has an outcome but never ran`);
      if (r.type === STEP_COMPLETED && !String(r.effectId).startsWith("model") && !applied.includes(key))
        violations.push(`${key} completed without its side effect`);
    }
  }
  // A fresh app replays every journal without running a single effect, to the journaled end.
  const before = [...runs.values()].reduce((a, b) => a + b, 0);
  proc.kill();
  await flush();
  await world.app.close();
  proc = new Process();
  const replayer = makeApp();
  for (const id of ids) {
    const outcome = await replayer.resume(id).then(
      (actor) => actor,
      (error: unknown) => error as Error & { code?: string },
    );
    if (isErased.get(id)) {
      if (journals[id] && (!(outcome instanceof Error) || outcome.code !== "LOOM_SUBJECT_ERASED"))
        violations.push(`${id}: resumed although its subject was erased`);
      continue;
    }
    if (outcome instanceof Error) {
      violations.push(`${id}: replay failed: ${outcome.message}`);
      continue;
    }
    const status = outcome.getSnapshot().status;
    const last = journals[id]!.at(-1)!;
    if (status !== (last.status === "done" ? "done" : "error"))
      violations.push(`${id}: replay ends ${status}, journal ${String(last.status)}`);
    // Nothing cited is swept: every claim-checked output of a live subject still resolves.
    for (const r of await replayer.log(id)) {
      if (r.type !== STEP_COMPLETED || r.effectId !== "search") continue;
      const value = await replayer
        .resolveClaimCheck(r.output, { subject: subjects.get(id)! })
        .catch((error: unknown) => error);
      if (value === null || value instanceof Error)
        violations.push(
          `${id}: the blob of ${String(r.stepId)} is gone (${String(value)}) though the journal cites it`,
        );
    }
  }
  if ([...runs.values()].reduce((a, b) => a + b, 0) !== before)
    violations.push("replaying ended executions ran an effect");
  // Erasures and sweeps run as journaled executions of their own: every one of them ended.
  for (const [id, log] of Object.entries(journals)) {
    if (!id.startsWith("loom.")) continue;
    if (log.at(-1)?.type !== EXECUTION_ENDED) violations.push(`${id} (lifecycle) did not end`);
  }
  if (eraseRequested && !(await base.keys.isDestroyed(ERASABLE)))
    violations.push(`${ERASABLE}: erasure requested, key not destroyed`);
  await replayer.close();

  const traceHash = sha256(JSON.stringify({ trace, journals, applied }));
  return {
    seed,
    traceHash,
    trace,
    violations,
    faults: faulting.injected,
    faultKinds: { ...faulting.kinds },
    restarts,
    records,
    erasures,
    sweeps,
    inflightSweeps,
  };
}
