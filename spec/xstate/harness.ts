// The XState conformance harness (issue 33): runs one corpus machine on plain XState (createActor) and on
// loomwork (createApp over memoryStores, app.start, actor.sendAsync) with the same events, on one clock the
// harness moves, and compares after each step what a user of XState observes: status (and error), state value,
// context, output, tags, the side effects of actions (what they print on the console) and emitted events.
// `Math.random` is seeded per runtime (the same sequence on each), so a machine that draws ids compares too; the
// apps run with `execution.checkDeterminism`, so a resume that draws other ids fails loudly (NonDeterminismError).
// Then it closes the app, resumes the execution in a fresh app over the same stores, compares again, and
// continues with the remaining events. It never sleeps: it waits on conditions, bounded by a guard timeout.
import { createActor, type AnyActorRef, type AnyMachineSnapshot } from "xstate";
import { createApp, type App } from "../../actors/app.js";
import type { Clock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import type { JournaledActor } from "../../actors/journal/actor.js";
import { memoryStores } from "../../stores/memory.js";
import { prng } from "../support/workload.js";
import { harnessTimers, type CorpusMachine, type Step } from "./corpusTypes.js";

export type Verdict =
  | { kind: "same" }
  | { kind: "refused at start"; error: { name: string; message: string } }
  | { kind: "differs"; at: string; aspect: string; xstate: unknown; loomwork: unknown }
  | { kind: "differs after resume"; at: string; aspect: string; xstate: unknown; loomwork: unknown }
  /** The reference run itself failed (plain XState threw, or never reached a wait's condition): a corpus bug, not a finding. */
  | { kind: "invalid"; reason: string };

export interface MachineResult {
  name: string;
  source: string;
  verdict: Verdict;
  /** Snapshots compared (after the start, each step, the resume). */
  comparisons: number;
  /** Warnings the loomwork apps reported (observability.onWarn), by code. */
  warnings: string[];
}

/** How long a wait on a condition may take before the run is judged (a guard, not a sleep: every wait ends on its condition). */
const WAIT_GUARD_MS = 1_000;

// ---- one clock for both runtimes, moved by the harness ----

interface Timer {
  due: number;
  order: number;
  owner: object;
  fn: () => void;
}

/** A clock the harness moves: loomwork's `Clock` and XState's `clock` option over one timer queue. */
class ControlledClock {
  private now = 0;
  private order = 0;
  private readonly timers = new Map<number, Timer>();

  private arm(owner: object, fn: () => void, ms: number): number {
    const id = ++this.order;
    this.timers.set(id, { due: this.now + Math.max(0, ms), order: id, owner, fn });
    return id;
  }

  /** loomwork's side: one per app, so a closed app's timers can be dropped. */
  forApp(owner: object): Clock {
    return {
      now: () => this.now,
      setTimer: (fn, ms) => {
        const id = this.arm(owner, fn, ms);
        return () => this.timers.delete(id);
      },
    };
  }

  /** XState's side (`createActor(machine, { clock })`). */
  forXState(owner: object): {
    setTimeout: (fn: (...args: any[]) => void, ms: number) => number;
    clearTimeout: (id: any) => void;
  } {
    return { setTimeout: (fn, ms) => this.arm(owner, fn, ms), clearTimeout: (id) => void this.timers.delete(id) };
  }

  drop(owner: object): void {
    for (const [id, t] of this.timers) if (t.owner === owner) this.timers.delete(id);
  }

  /** Moves to `now + ms`, one due timer at a time; `fire` runs each timer's callback and settles the runtime that armed it. */
  async advance(ms: number, fire: (owner: object, fn: () => void) => Promise<void>): Promise<void> {
    const until = this.now + ms;
    while (true) {
      const next = [...this.timers.entries()]
        .filter(([, t]) => t.due <= until)
        .sort((a, b) => a[1].due - b[1].due || a[1].order - b[1].order)[0];
      if (!next) break;
      this.timers.delete(next[0]);
      this.now = Math.max(this.now, next[1].due);
      await fire(next[1].owner, next[1].fn);
    }
    this.now = until;
  }
}

// ---- what is observed ----

/** What a user of XState sees of an actor, as plain JSON (actor refs named by id). */
export interface Observation {
  status: unknown;
  error: unknown;
  value: unknown;
  context: unknown;
  output: unknown;
  tags: unknown;
  actions: unknown;
  emitted: unknown;
}
const ASPECTS: (keyof Observation)[] = ["status", "error", "value", "context", "output", "tags", "actions", "emitted"];

/** A value as plain JSON for comparison: actor refs become `{ actorRef: id }`, errors their name and message, functions a mark. */
export function plain(value: unknown, seen = new WeakSet<object>()): unknown {
  if (value === undefined || value === null || typeof value !== "object") {
    if (typeof value === "function") return "[function]";
    if (typeof value === "bigint" || typeof value === "symbol") return String(value);
    return value;
  }
  if (seen.has(value)) return "[cycle]";
  seen.add(value);
  try {
    if (isActorRef(value)) return { actorRef: value.id };
    if (value instanceof Error) return { name: value.name, message: value.message };
    if (Array.isArray(value)) return value.map((v) => plain(v, seen));
    if (value instanceof Map) return { map: [...value.entries()].map(([k, v]) => [plain(k, seen), plain(v, seen)]) };
    if (value instanceof Set) return { set: [...value].map((v) => plain(v, seen)) };
    if (value instanceof Date) return value.toISOString();
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = plain((value as Record<string, unknown>)[key], seen);
      if (v !== undefined) out[key] = v;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function isActorRef(value: object): value is { id: string } {
  return (
    "sessionId" in value && "send" in value && typeof (value as { send: unknown }).send === "function" && "id" in value
  );
}

interface Trace {
  actions: string[];
  emitted: unknown[];
  /** This runtime's own `Math.random`: both runtimes draw the same seeded sequence, so a draw's value compares. */
  random: () => number;
}

function observe(snapshot: AnyMachineSnapshot, trace: Trace): Observation {
  const error = snapshot.status === "error" ? errorMessage(snapshot.error) : undefined;
  return {
    status: snapshot.status,
    error,
    value: plain(snapshot.value),
    context: plain(snapshot.context),
    output: plain(snapshot.output),
    tags: [...(snapshot.tags ?? [])].sort(),
    actions: [...trace.actions],
    emitted: plain(trace.emitted),
  };
}

function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message);
  return JSON.stringify(plain(error));
}

function firstDifference(
  x: Observation,
  l: Observation,
): { aspect: string; xstate: unknown; loomwork: unknown } | undefined {
  for (const aspect of ASPECTS) {
    if (JSON.stringify(x[aspect]) !== JSON.stringify(l[aspect]))
      return { aspect, xstate: x[aspect], loomwork: l[aspect] };
  }
  return undefined;
}

// ---- side effects of actions (the console) and Math.random, routed to the runtime the harness is driving ----

const CONSOLE_METHODS = ["log", "info", "warn", "debug"] as const;
let sink: Trace | undefined;

function captureAmbient(): () => void {
  const saved = CONSOLE_METHODS.map((m) => [m, console[m]] as const);
  const random = Math.random;
  for (const m of CONSOLE_METHODS) {
    console[m] = (...args: unknown[]) => {
      sink?.actions.push(`${m}: ${args.map((a) => (typeof a === "string" ? a : JSON.stringify(plain(a)))).join(" ")}`);
    };
  }
  Math.random = () => (sink ? sink.random() : random());
  return () => {
    for (const [m, fn] of saved) console[m] = fn;
    Math.random = random;
  };
}

// ---- waiting ----

/** Resolves true once `holds(snapshot)`, false if the guard timeout passes first or the actor stops being active without it. */
function waitUntil(
  actor: {
    getSnapshot(): AnyMachineSnapshot;
    subscribe(o: { next: (s: AnyMachineSnapshot) => void; error?: (e: unknown) => void }): { unsubscribe(): void };
  },
  holds: (s: AnyMachineSnapshot) => boolean,
): Promise<boolean> {
  if (holds(actor.getSnapshot())) return Promise.resolve(true);
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(guard);
      queueMicrotask(() => sub.unsubscribe());
      resolve(ok);
    };
    const guard = setTimeout(() => finish(holds(actor.getSnapshot())), WAIT_GUARD_MS);
    const sub = actor.subscribe({
      next: (s) => {
        if (holds(s)) finish(true);
        else if (s.status !== "active") finish(false);
      },
      error: () => finish(holds(actor.getSnapshot())),
    });
  });
}

/** Lets promise callbacks and their follow-up microtasks run (one macrotask turn; not a timed sleep). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---- one machine ----

interface Loom {
  app: App;
  actor: JournaledActor;
  owner: object;
}

/** Runs one corpus machine on both runtimes and classifies it. Never throws: anything unexpected is in the verdict. */
export async function runMachine(entry: CorpusMachine): Promise<MachineResult> {
  const restore = captureAmbient();
  const warnings: string[] = [];
  let comparisons = 0;
  const xTrace: Trace = { actions: [], emitted: [], random: prng(33) };
  const lTrace: Trace = { actions: [], emitted: [], random: prng(33) };
  const clock = new ControlledClock();
  // An actor's own timers (callback actors), on the same clock, owned by the runtime whose code arms them (the one the
  // harness is on then: XState starts its callbacks in its start, loomwork its live sources once their macrostep is
  // durable, both inside the harness's call): a timer's callback then runs on its runtime's side.
  const xSide = {};
  const lSide = {};
  const sides = { x: clock.forApp(xSide), l: clock.forApp(lSide), shared: clock.forApp({}) };
  harnessTimers.clock = {
    setTimer: (fn, ms) => (sink === xTrace ? sides.x : sink === lTrace ? sides.l : sides.shared).setTimer(fn, ms),
  };
  const stores = memoryStores();
  const executionId = `xconf-${entry.name}`;
  const result = (verdict: Verdict): MachineResult => ({
    name: entry.name,
    source: entry.source,
    verdict,
    comparisons,
    warnings,
  });
  let xActor: AnyActorRef | undefined;
  const xOwner = {};
  let loom: Loom | undefined;

  // The first app is a user's app that starts the machine; the one that resumes lists it in `logics`, as a resume needs.
  const newApp = (owner: object, resuming: boolean) =>
    createApp(
      defineConfig({
        stores,
        effects: entry.effects ?? {},
        ...(resuming ? { logics: [entry.machine] } : {}),
        clock: clock.forApp(owner),
        execution: { snapshotEvery: false, checkDeterminism: true },
        observability: { onWarn: (w) => void warnings.push(w.code) },
      }),
    );
  const onX = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    sink = xTrace;
    try {
      return await fn();
    } finally {
      sink = undefined;
    }
  };
  const onL = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    sink = lTrace;
    try {
      return await fn();
    } finally {
      sink = undefined;
    }
  };
  const settleX = () =>
    onX(async () => {
      await turn();
      await turn();
    });
  const settleL = () =>
    onL(async () => {
      if (loom) await loom.actor.settled();
      await turn();
    });

  try {
    // The reference run starts first: if plain XState cannot run the entry, the entry is wrong.
    try {
      xActor = await onX(() => {
        // XState's default logger is console.log as it was when xstate loaded: route log() through the console read now.
        const actor = createActor(entry.machine, {
          ...(entry.input === undefined ? {} : { input: entry.input }),
          clock: clock.forXState(xOwner),
          logger: (...args: unknown[]) => console.log(...args),
        });
        actor.on("*", (e: unknown) => void xTrace.emitted.push(plain(e)));
        actor.subscribe({ error: () => undefined });
        actor.start();
        return actor;
      });
    } catch (error) {
      return result({ kind: "invalid", reason: `plain XState threw at start: ${describe(error)}` });
    }
    await settleX();

    const lOwner = {};
    try {
      const app = newApp(lOwner, false);
      const actor = await onL(() =>
        app.start(entry.machine, { executionId, ...(entry.input === undefined ? {} : { input: entry.input }) }),
      );
      subscribeEmitted(actor, lTrace);
      loom = { app, actor, owner: lOwner };
    } catch (error) {
      return result({ kind: "refused at start", error: errorFacts(error) });
    }
    await settleL();

    const compare = async (
      at: string,
      until: ((s: AnyMachineSnapshot) => boolean) | undefined,
      untilText: string | undefined,
      resumed: boolean,
    ): Promise<Verdict | undefined> => {
      if (until) {
        const xOk = await onX(() => waitUntil(xActor!, until));
        if (!xOk)
          return {
            kind: "invalid",
            reason: `${at}: plain XState never reached ${untilText ?? "the wait's condition"} (state ${JSON.stringify(plain(xActor!.getSnapshot().value))})`,
          };
        const lOk = await onL(() => waitUntil(loom!.actor, until));
        await settleL();
        if (!lOk) {
          const s = loom!.actor.getSnapshot();
          return {
            kind: resumed ? "differs after resume" : "differs",
            at,
            aspect: `wait for ${untilText ?? "the wait's condition"}`,
            xstate: "reached",
            loomwork: `not reached: ${s.status}, state ${JSON.stringify(plain(s.value))}`,
          };
        }
      }
      comparisons++;
      const d = firstDifference(observe(xActor!.getSnapshot(), xTrace), observe(loom!.actor.getSnapshot(), lTrace));
      return d ? { kind: resumed ? "differs after resume" : "differs", at, ...d } : undefined;
    };

    let verdict = await compare("start", entry.startUntil, entry.startUntilText, false);
    if (verdict) return result(verdict);

    const resumeAfter = Math.min(entry.resumeAfter ?? Math.ceil(entry.steps.length / 2), entry.steps.length);
    const runStep = async (step: Step, index: number, resumed: boolean): Promise<Verdict | undefined> => {
      const at = `step ${index + 1} (${stepText(step)})${resumed ? ", after the resume" : ""}`;
      if (step.send) {
        const event = step.send;
        await onX(() => xActor!.send(event));
        await settleX();
        try {
          await onL(() => loom!.actor.sendAsync(event));
        } catch (error) {
          return {
            kind: resumed ? "differs after resume" : "differs",
            at,
            aspect: "send",
            xstate: "accepted",
            loomwork: `refused: ${describe(error)}`,
          };
        }
        await settleL();
      }
      if (step.advance !== undefined) {
        // A timer's callback runs on the side of the runtime that armed it (its actions' side effects are that runtime's).
        await clock.advance(step.advance, async (owner, fn) => {
          if (owner === xOwner || owner === xSide) {
            await onX(fn);
            await settleX();
          } else if (owner === loom!.owner || owner === lSide) {
            await onL(fn);
            await settleL();
          } else {
            fn();
            await settleX();
            await settleL();
          }
        });
      }
      return compare(at, step.until, step.untilText, resumed);
    };

    for (let i = 0; i < resumeAfter; i++) {
      verdict = await runStep(entry.steps[i]!, i, false);
      if (verdict) return result(verdict);
    }

    // Close, resume in a fresh app over the same stores, compare, continue.
    await loom.app.close();
    clock.drop(loom.owner);
    const rOwner = {};
    const app = newApp(rOwner, true);
    try {
      const actor = await onL(() => app.resume(executionId));
      subscribeEmitted(actor, lTrace);
      loom = { app, actor, owner: rOwner };
    } catch (error) {
      loom = undefined;
      await app.close();
      return result({
        kind: "differs after resume",
        at: "the resume",
        aspect: "resume",
        xstate: "(runs on)",
        loomwork: `app.resume threw ${describe(error)}`,
      });
    }
    await settleL();
    verdict = await compare(`the resume after step ${resumeAfter}`, undefined, undefined, true);
    if (verdict) return result(verdict);
    for (let i = resumeAfter; i < entry.steps.length; i++) {
      verdict = await runStep(entry.steps[i]!, i, true);
      if (verdict) return result(verdict);
    }
    return result({ kind: "same" });
  } catch (error) {
    // Anything not classified above is still a classification: where loomwork (or the harness) threw.
    return result({
      kind: "differs",
      at: "the run",
      aspect: "thrown",
      xstate: "(no error)",
      loomwork: describe(error),
    });
  } finally {
    xActor?.stop();
    await loom?.app.close().catch(() => undefined);
    harnessTimers.clock = undefined;
    restore();
  }
}

function subscribeEmitted(actor: JournaledActor, trace: Trace): void {
  // XState's actor has `.on(type, handler)` for emitted events; a runtime without it emits nothing observable.
  const on = (actor as unknown as { on?: (type: string, handler: (e: unknown) => void) => unknown }).on;
  if (typeof on === "function") on.call(actor, "*", (e: unknown) => void trace.emitted.push(plain(e)));
}

function stepText(step: Step): string {
  const parts: string[] = [];
  if (step.send) parts.push(`send ${step.send.type}`);
  if (step.advance !== undefined) parts.push(`advance ${step.advance} ms`);
  if (step.untilText) parts.push(`until ${step.untilText}`);
  return parts.join(", ") || "wait";
}

function errorFacts(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: typeof error, message: String(error) };
}

function describe(error: unknown): string {
  const { name, message } = errorFacts(error);
  return `${name}: ${message}`;
}

/** Runs every machine of a corpus in turn (sequentially: the console is routed per runtime). */
export async function runCorpus(
  corpus: readonly CorpusMachine[],
  onResult?: (r: MachineResult) => void,
): Promise<MachineResult[]> {
  const results: MachineResult[] = [];
  for (const entry of corpus) {
    const r = await runMachine(entry);
    onResult?.(r);
    results.push(r);
  }
  return results;
}

export type VerdictKind = Verdict["kind"];
export const VERDICT_KINDS: readonly VerdictKind[] = [
  "same",
  "refused at start",
  "differs",
  "differs after resume",
  "invalid",
];

/** Totals per verdict kind. */
export function totals(results: readonly MachineResult[]): Record<VerdictKind, number> {
  const t = Object.fromEntries(VERDICT_KINDS.map((k) => [k, 0])) as Record<VerdictKind, number>;
  for (const r of results) t[r.verdict.kind]++;
  return t;
}

/** One line per machine: what the verdict says, for tables. */
export function verdictDetail(verdict: Verdict): string {
  switch (verdict.kind) {
    case "same":
      return "";
    case "refused at start":
      return `${verdict.error.name}: ${verdict.error.message}`;
    case "differs":
    case "differs after resume":
      return `${verdict.at}: ${verdict.aspect}: XState ${short(verdict.xstate)}, loomwork ${short(verdict.loomwork)}`;
    case "invalid":
      return verdict.reason;
  }
}

function short(value: unknown, max = 160): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === undefined ? "undefined" : text.length > max ? `${text.slice(0, max)}…` : text;
}
