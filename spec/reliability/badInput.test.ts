// Campaign 7: bad input, generated with fast-check where a generator helps. Malformed configs,
// tampered (malformed and reordered) logs, tool outputs that are not JSON, 10 MB outputs, 100k-deep
// nesting, lone surrogates and non-UTF-8 bytes. Pass: a typed error naming the option or the step, the
// execution in a defined state (its journal replays in a fresh app to the same state), nothing
// half-written (the journal is JSON, contiguous, reopens), nothing pinned that should not be.
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp, type App } from "../../actors/app.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import { createToolEffect, type Effect } from "../../actors/effects/effect.js";
import type { Warning } from "../../actors/bus.js";
import { AppClosedError, ConfigError, ModelReplyError } from "../../actors/errors.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { fsStores } from "../../adapters/fs/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { createAgentLoopMachine } from "../../machines/agentLoop.js";
import { tainted } from "../../machines/helpers/taint.js";
import { LoomworkError } from "../../stores/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { StoredRecord, Stores } from "../../stores/types.js";
import { demoMachine } from "../support/demoMachine.js";
import { countedDemoEffects, ForwardingEventStore } from "../support/harness.js";
import { cases, contiguous, removeTempDirs, tempDir, timeout } from "./support.js";
import { expandRecords } from "../../stores/recordFormat.js";
import { eraseSubject, exportSubject, sweep } from "../../lifecycle.js";

afterAll(removeTempDirs);

const runs = (ci: number, soak: number) => ({
  numRuns: cases("PROPERTY_RUNS", ci, soak),
  ...(process.env.LOOMWORK_SEED ? { seed: Number(process.env.LOOMWORK_SEED) } : {}),
});
type ClosableStores = Stores & { close?(): Promise<void> };
const isTyped = (error: unknown) => error instanceof LoomworkError || error instanceof ConfigError;

// ---------------------------------------------------------------------------------------------------
// An agent whose one tool returns whatever the test hands it.

const LOOP = agentLoop$({ id: "bad", model: "model", tools: ["tool"], maxTurns: 3, warnTranscriptBytes: false });
const TOOL_STEP = "bad#turn:0:tool:0";

function agentEffects(output: () => unknown, counter = { runs: 0 }): Record<string, Effect> {
  return {
    model: createLlmEffect(scriptedModel([{ toolCalls: [{ toolName: "tool", input: { q: "x" } }] }, { text: "done" }])),
    tool: createToolEffect(async () => {
      counter.runs++;
      return output();
    }),
  };
}

type Variant = "plain" | "redact" | "claimCheck";
function variantConfig(variant: Variant, stores: Stores): Partial<LoomConfig> {
  if (variant === "redact") return { security: { redact: [/sk-[a-z0-9]+/g] } };
  if (variant === "claimCheck") return { execution: { claimCheck: { store: stores.content, toolIds: ["tool"] } } };
  return {};
}

interface AgentRun {
  app: App;
  stores: Stores;
  log: StoredRecord[];
  result: unknown;
  blobs: number;
}

async function runAgent(
  output: () => unknown,
  options: { variant?: Variant; stores?: Stores; executionId?: string; subject?: string } = {},
): Promise<AgentRun> {
  const stores = options.stores ?? memoryStores();
  const executionId = options.executionId ?? "e";
  const app = createApp(
    defineConfig({
      stores,
      effects: agentEffects(output),
      logics: [LOOP],
      ...variantConfig(options.variant ?? "plain", stores),
    }),
  );
  await app.start(LOOP, {
    executionId,
    input: { prompt: "go" },
    ...(options.subject === undefined ? {} : { subject: options.subject }),
  });
  const result = await app.result(executionId).catch((error: unknown) => error);
  let blobs = 0;
  for await (const _ of stores.content.list()) blobs++;
  return { app, stores, log: await app.log(executionId), result, blobs };
}

/** The execution is in a defined state: its journal is JSON, contiguous, and a fresh app replays it to the same end without running anything. */
async function expectDefinedState(run: AgentRun, label: string, executionId = "e"): Promise<void> {
  expect(JSON.parse(JSON.stringify(run.log)), `${label}: the journal is JSON`).toEqual(run.log);
  expect(contiguous(run.log), `${label}: contiguous`).toBe(true);
  const counter = { runs: 0 };
  const fresh = createApp(
    defineConfig({
      stores: run.stores,
      effects: agentEffects(() => "never", counter),
      logics: [LOOP],
      ...variantConfig("plain", run.stores),
    }),
  );
  const actor = await fresh.resume(executionId);
  expect(counter.runs, `${label}: replay runs nothing`).toBe(0);
  expect(actor.getSnapshot().status, label).toBe(
    run.log.at(-1)?.type === EXECUTION_ENDED ? (run.log.at(-1)!.status === "done" ? "done" : "error") : "active",
  );
  await fresh.close();
}

// ---------------------------------------------------------------------------------------------------
// Values that are not JSON, hidden anywhere inside a JSON value.

type Poison = "bigint" | "function" | "symbol" | "cycle";
const poisonArb = fc.constantFrom<Poison>("bigint", "function", "symbol", "cycle");

function poisoned(value: unknown, poison: Poison, path: number[]): unknown {
  const holder: Record<string, unknown> = { value };
  let node: Record<string, unknown> = holder;
  let key = "value";
  for (const step of path) {
    const child = node[key];
    if (typeof child !== "object" || child === null) break;
    const keys = Object.keys(child);
    if (keys.length === 0) break;
    node = child as Record<string, unknown>;
    key = keys[step % keys.length]!;
  }
  const target: Record<string, unknown> = { inner: node[key] };
  if (poison === "bigint") target.n = 10n ** 30n;
  else if (poison === "function") target.f = () => "not data";
  else if (poison === "symbol") target.s = Symbol("not data");
  else target.self = target;
  node[key] = target;
  return holder.value;
}

function deep(levels: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** Strings of arbitrary UTF-16 code units: lone surrogates and unpaired halves included. */
const codeUnits = (maxLength: number) =>
  fc
    .array(fc.oneof(fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0, max: 0xffff })), { maxLength })
    .map((units) => String.fromCharCode(...units));

// ---------------------------------------------------------------------------------------------------

describe("bad input: malformed configs", () => {
  const valid = (): LoomConfig => ({
    stores: memoryStores(),
    effects: countedDemoEffects().effects,
    logics: [demoMachine],
  });

  it(
    "createApp refuses any malformed value with ConfigError naming the option, never another error",
    () => {
      fc.assert(
        fc.property(
          fc.anything({ maxDepth: 3, withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }),
          (config) => {
            try {
              createApp(config as LoomConfig);
            } catch (error) {
              expect(error, String((error as Error).message)).toBeInstanceOf(ConfigError);
              expect((error as ConfigError).message).toContain((error as ConfigError).path);
              return;
            }
            throw new Error(`createApp accepted ${fc.stringify(config)}`);
          },
        ),
        runs(300, 20_000),
      );
    },
    timeout(30_000, 1_200_000),
  );

  const OPTIONS = [
    "stores",
    "effects",
    "logics",
    "clock",
    "execution",
    "execution.snapshotEvery",
    "execution.effectMiddleware",
    "execution.claimCheck",
    "execution.claimCheck.toolIds",
    "execution.claimCheck.store",
    "execution.claimCheck.inlineCapBytes",
    "execution.claimCheck.preview",
    "execution.claimCheck.digests",
    "execution.claimCheck.reclaimable",
    "security",
    "security.redact",
    "security.crypto",
    "compliance",
    "compliance.erase",
    "observability",
    "observability.onWarn",
    "observability.inspect",
    "capabilities",
    "capabilities.grants",
    "capabilities.quotas",
    "capabilities.retry",
    "capabilities.timeoutMs",
    "capabilities.guardRequest",
    "effects.research",
    "snapshotEvery",
    "redact",
    "onWarn",
    "maxModelCalls",
    "unknownOption",
  ];

  it(
    "refuses a valid config with one option set to a wrong value with ConfigError naming that option; anything it accepts runs",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...OPTIONS),
          fc.oneof(
            fc.anything({ maxDepth: 2 }),
            fc.constantFrom(
              -1,
              0,
              1.5,
              "",
              [],
              {},
              null,
              () => undefined,
              [1],
              ["research"],
              { research: 1 },
              NaN,
              true,
            ),
          ),
          async (path, value) => {
            const config = valid() as unknown as Record<string, any>;
            const keys = path.split(".");
            let node = config;
            for (const key of keys.slice(0, -1)) {
              if (typeof node[key] !== "object" || node[key] === null)
                node[key] = key === "claimCheck" ? { store: config.stores.content, toolIds: ["research"] } : {};
              node = node[key];
            }
            node[keys.at(-1)!] = value;
            let app: App;
            try {
              app = createApp(config as LoomConfig);
            } catch (error) {
              const named = (error as ConfigError).path ?? "";
              expect(error, `${path} = ${fc.stringify(value)}: ${(error as Error).message}`).toBeInstanceOf(
                ConfigError,
              );
              expect(
                path.startsWith(named) || named.startsWith(path.split(".")[0]!),
                `${path} = ${fc.stringify(value)} refused naming "${named}"`,
              ).toBe(true);
              return;
            }
            // Accepted: it must work (a bad option is refused at boot, never mid-run).
            const actor = await app.start(demoMachine, { executionId: "r", input: { topic: "owls" } });
            await actor.settled();
            if (actor.getSnapshot().value === "waiting") await actor.sendAsync({ type: "APPROVE" });
            await actor.settled();
            await expect(app.result("r"), `${path} = ${fc.stringify(value)} was accepted`).resolves.toMatchObject({
              approved: true,
            });
            await app.close();
          },
        ),
        runs(300, 20_000),
      );
    },
    timeout(60_000, 1_800_000),
  );

  // Found by this campaign (actors/config.ts validateConfig checks neither): `logics` that is not an array
  // of machines makes createApp throw a raw TypeError ("... is not iterable", "reading 'id'"); a `clock`
  // without now/setTimer is accepted and the first start fails mid-run ("this.runtime.clock.now is not a function").
  it.each<[string, string, unknown]>([
    ["logics", "5", 5],
    ["logics", "{ demo: machine }", { demo: demoMachine }],
    ["logics", "[null]", [null]],
    ["clock", "{}", {}],
    ["clock", "{ now }", { now: () => 0 }],
  ])("refuses %s = %s at boot with ConfigError naming it", (option, _shown, value) => {
    const error = (() => {
      try {
        createApp({ ...valid(), [option]: value } as LoomConfig);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ path: option });
  });

  it("agentLoop$ refuses a malformed config with ConfigError naming agentLoop$.<option>", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          "id",
          "model",
          "tools",
          "maxTurns",
          "compaction",
          "compaction.afterBytes",
          "compaction.toolId",
          "warnTranscriptBytes",
          "onWarn",
        ),
        fc.anything({ maxDepth: 2 }),
        (path, value) => {
          const config: Record<string, any> = { id: "ok", model: "model", tools: ["t"] };
          const keys = path.split(".");
          if (keys.length === 2) config[keys[0]!] = { toolId: "s", afterBytes: 10, [keys[1]!]: value };
          else config[path] = value;
          try {
            agentLoop$(config as never);
          } catch (error) {
            expect(error, `${path} = ${fc.stringify(value)}: ${(error as Error).message}`).toBeInstanceOf(ConfigError);
            expect((error as ConfigError).path).toMatch(/^agentLoop\$\./);
          }
        },
      ),
      runs(300, 20_000),
    );
  });
});

// ---------------------------------------------------------------------------------------------------

/** The journals the tampering starts from: the demo (timer, event, two effects) and an agent with two tools in a turn. */
async function referenceRuns() {
  const demoStores = memoryStores();
  const clock = simulatedClock(1_000_000);
  const demoApp = createApp(defineConfig({ stores: demoStores, effects: countedDemoEffects().effects, clock }));
  const demo = await demoApp.start(demoMachine, { executionId: "d", input: { topic: "owls" } });
  await demo.settled();
  await demo.sendAsync({ type: "APPROVE" });
  await demo.settled();
  const agentStores = memoryStores();
  const agentApp = createApp(defineConfig({ stores: agentStores, effects: twoToolEffects(), clock }));
  await agentApp.start(TWO_TOOLS, { executionId: "a", input: { prompt: "go" } });
  return {
    demo: { log: await demoApp.log("d"), output: await demoApp.result("d") },
    agent: { log: await agentApp.log("a"), output: await agentApp.result("a") },
  };
}

const TWO_TOOLS = agentLoop$({
  id: "two",
  model: "model",
  tools: ["search", "lookup"],
  maxTurns: 4,
  warnTranscriptBytes: false,
});
function twoToolEffects(): Record<string, Effect> {
  return {
    model: createLlmEffect(
      scriptedModel((_request, call) =>
        call < 2
          ? {
              toolCalls: [
                { toolName: "search", input: { q: call } },
                { toolName: "lookup", input: { id: call } },
              ],
            }
          : { text: "answer" },
      ),
    ),
    search: createToolEffect(async ({ q }: { q: number }) => ({ hits: [`hit ${q}`] })),
    lookup: createToolEffect(async ({ id }: { id: number }) => ({ id, name: "barn owl" })),
  };
}

type Mutation =
  | { op: "swap"; i: number; j: number }
  | { op: "delete"; i: number }
  | { op: "duplicate"; i: number; j: number }
  | { op: "retype"; i: number; type: string }
  | { op: "set"; i: number; field: string; value: unknown }
  | { op: "drop"; i: number; field: string }
  | { op: "truncate"; i: number };

const TYPES = [
  "loom.execution.started",
  "loom.event.received",
  "loom.step.completed",
  "loom.step.failed",
  "loom.timer.set",
  "loom.transition",
  "loom.execution.ended",
  "loom.erasure.content-deleted",
  "loom.bogus",
];
const FIELDS = ["stepId", "effectId", "from", "to", "event", "timerId", "dueAt", "status", "logicId", "input"];
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("swap" as const), i: fc.nat(), j: fc.nat() }),
  fc.record({ op: fc.constant("delete" as const), i: fc.nat() }),
  fc.record({ op: fc.constant("duplicate" as const), i: fc.nat(), j: fc.nat() }),
  fc.record({ op: fc.constant("retype" as const), i: fc.nat(), type: fc.constantFrom(...TYPES) }),
  fc.record({
    op: fc.constant("set" as const),
    i: fc.nat(),
    field: fc.constantFrom(...FIELDS),
    value: fc.oneof(
      fc.constantFrom<unknown>(
        "two#turn:0:tool:1",
        "two#turn:1:model",
        "demo#write:1",
        "waiting",
        "done",
        "error",
        null,
        0,
        { type: "APPROVE" },
      ),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  }),
  fc.record({ op: fc.constant("drop" as const), i: fc.nat(), field: fc.constantFrom(...FIELDS) }),
  // A log cut after record i (what a store at rest may hold after losing its tail): the replay must run the rest.
  fc.record({ op: fc.constant("truncate" as const), i: fc.nat() }),
);

function tamper(log: StoredRecord[], mutations: Mutation[]): StoredRecord[] {
  let records = log.map((r) => structuredClone(r));
  for (const m of mutations) {
    if (records.length === 0) break;
    const i = m.i % records.length;
    if (m.op === "swap") {
      const j = m.j % records.length;
      [records[i], records[j]] = [records[j]!, records[i]!];
    } else if (m.op === "delete") records.splice(i, 1);
    else if (m.op === "duplicate") records.splice(m.j % (records.length + 1), 0, structuredClone(records[i]!));
    else if (m.op === "retype") records[i]!.type = m.type;
    else if (m.op === "set") records[i]![m.field] = structuredClone(m.value);
    else if (m.op === "truncate") records.splice(i + 1);
    else delete records[i]![m.field];
  }
  // Tampered at rest: the store's own seq fence would refuse gaps, so seqs are renumbered.
  records = records.map((r, k) => ({ ...r, seq: k + 1 }));
  return records;
}

type Verdict =
  | { kind: "refused"; error: unknown }
  | { kind: "ended"; output: unknown }
  | { kind: "failed"; error: unknown }
  | { kind: "running"; state: unknown };

/** Drive rounds a tampered replay gets to end: each settles it, approves a waiting demo and advances the clock past its timer. */
const REPLAY_ROUNDS = 4;
/** Only a hang guard (a replay that never settles fails the property with its label): never reached by a replay that ends. */
const HANG_GUARD_MS = 10_000;

async function replayTampered(which: "demo" | "agent", records: StoredRecord[]): Promise<Verdict> {
  const stores = memoryStores();
  if (records.length > 0) await stores.events.append("t", 0, records);
  const clock = simulatedClock(1_000_000);
  const app = createApp(
    defineConfig({
      stores,
      clock,
      effects: which === "demo" ? countedDemoEffects().effects : twoToolEffects(),
      logics: [which === "demo" ? demoMachine : TWO_TOOLS],
    }),
  );
  let guard: ReturnType<typeof setTimeout> | undefined;
  try {
    const drive = async (): Promise<Verdict> => {
      const actor = await app.resume("t");
      for (let i = 0; i < REPLAY_ROUNDS; i++) {
        await actor.settled();
        if (actor.getSnapshot().value === "waiting") await actor.sendAsync({ type: "APPROVE" }).catch(() => undefined);
        clock.advance(1_000);
      }
      await actor.settled();
      // Within the bound: an execution that ended has settled its outcome before the next macrotask.
      const outcome = app.result("t").then(
        (output) => ({ kind: "ended", output }) as const,
        (error: unknown) => ({ kind: "failed", error }) as const,
      );
      const still = new Promise<Verdict>((resolve) =>
        setImmediate(() => resolve({ kind: "running", state: actor.getSnapshot().value })),
      );
      return Promise.race([outcome, still]);
    };
    const hang = new Promise<Verdict>((resolve) => {
      guard = setTimeout(
        () => resolve({ kind: "running", state: `did not settle within ${HANG_GUARD_MS} ms` }),
        HANG_GUARD_MS,
      );
    });
    return await Promise.race([drive(), hang]);
  } catch (error) {
    return { kind: "refused", error };
  } finally {
    clearTimeout(guard);
    await app.close();
  }
}

/** A typed refusal: a loomwork error, or an ExecutionFailedError whose journaled error is itself typed (a LOOM_ code). */
function typedRefusal(error: unknown): boolean {
  if (!isTyped(error)) return false;
  const failed = error as { code?: string; error?: { code?: unknown } };
  const inner = failed.code === "LOOM_EXECUTION_FAILED" ? failed.error : undefined;
  return inner === undefined || (typeof inner.code === "string" && inner.code.startsWith("LOOM_"));
}

describe("bad input: tampered logs", () => {
  // Found by this campaign: an EVENT_RECEIVED record whose `event` is missing or not an object with a
  // string `type` makes resume throw a raw TypeError from the planner (actors/journal/planner.ts planMacrostep reads
  // event.type.startsWith; eventOf passes input.event through unchecked), instead of a typed error
  // naming the execution and the seq.
  it.each<[string, (r: StoredRecord) => void]>([
    ["without its event", (r) => delete r.event],
    ["whose event is an array", (r) => (r.event = ["APPROVE"])],
    ["whose event has no type", (r) => (r.event = { kind: "APPROVE" })],
  ])("refuses an EVENT_RECEIVED record %s with a typed error naming its seq", async (_what, damage) => {
    const { demo } = await referenceRuns();
    const records = demo.log.map((r) => structuredClone(r));
    const received = records.find((r) => r.type === "loom.event.received")!;
    damage(received);
    const verdict = await replayTampered("demo", records);
    expect(verdict.kind).toBe("refused");
    expect(isTyped((verdict as { error: unknown }).error), String((verdict as { error: unknown }).error)).toBe(true);
    expect((verdict as { error: { seq?: number } }).error.seq).toBe(received.seq);
  });

  // Found by this campaign (seed 1128719876): once an error end could stand on its own (an action that threw after
  // its macrostep), replay folded any lone EXECUTION_ENDED but a done one, so a record retyped to it without a
  // status left the execution neither running nor ended: resumed, it never answered.
  it("refuses a lone EXECUTION_ENDED whose status is neither stopped nor error with its error, naming its seq", async () => {
    const { agent } = await referenceRuns();
    const records = agent.log.map((r) => structuredClone(r));
    const index = records.findIndex((r) => r.type === "loom.step.completed");
    const retyped = records[index]!;
    retyped.type = "loom.execution.ended";
    const verdict = await replayTampered("agent", records.slice(0, index + 1));
    expect(verdict.kind).toBe("refused");
    expect(isTyped((verdict as { error: unknown }).error), String((verdict as { error: unknown }).error)).toBe(true);
    expect((verdict as { error: { seq?: number } }).error.seq).toBe(retyped.seq);
  });

  it(
    "resumes a malformed or reordered log with a typed error, or to the untampered answer, never a silent wrong one",
    async () => {
      const reference = await referenceRuns();
      const tally = { refused: 0, ended: 0, failed: 0, running: 0 };
      let total = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("demo" as const, "agent" as const),
          fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
          async (which, mutations) => {
            const records = tamper(reference[which].log, mutations);
            const verdict = await replayTampered(which, records);
            tally[verdict.kind]++;
            total++;
            const label = `${which} ${JSON.stringify(mutations)}`;
            // Every tampered replay ends within REPLAY_ROUNDS: with the untampered answer, or refused with a typed error.
            expect(
              verdict.kind,
              `${label}: still running (${JSON.stringify((verdict as { state?: unknown }).state)}) after ${REPLAY_ROUNDS} rounds`,
            ).not.toBe("running");
            if (verdict.kind === "refused" || verdict.kind === "failed") {
              const error = verdict.error as { message?: string; error?: unknown };
              expect(
                typedRefusal(verdict.error),
                `${label}: ${String(error.message ?? error)} ${JSON.stringify(error.error ?? "")}`,
              ).toBe(true);
            }
            if (verdict.kind === "ended")
              expect(verdict.output, `${label}: a resumed tampered log answered differently`).toEqual(
                reference[which].output,
              );
          },
        ),
        runs(250, 20_000),
      );
      console.info(`[campaign 7] tampered logs: ${total} replays ${JSON.stringify(tally)}`);
      // Both outcomes are exercised, and every case is one of them.
      expect(tally.running).toBe(0);
      expect(tally.refused + tally.failed + tally.ended).toBe(total);
      expect(tally.refused + tally.failed, "some tampered replays were refused").toBeGreaterThan(0);
      expect(tally.ended, "some tampered replays resumed to the untampered answer").toBeGreaterThan(0);
    },
    timeout(60_000, 3_600_000),
  );
});

// ---------------------------------------------------------------------------------------------------

describe("bad input: tool outputs that are not JSON", () => {
  it(
    "fails the step with NonJsonOutputError naming it, journaled; the run goes on; nothing half-written or pinned (plain and redacting apps)",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.jsonValue({ maxDepth: 3 }),
          poisonArb,
          fc.array(fc.nat(), { maxLength: 4 }),
          fc.constantFrom<Variant>("plain", "redact"),
          async (json, poison, path, variant) => {
            const run = await runAgent(() => poisoned(structuredClone(json), poison, path), { variant });
            const label = `${variant}, ${poison} at ${JSON.stringify(path)}`;
            const failed = run.log.find((r) => r.type === STEP_FAILED);
            expect(failed, label).toMatchObject({
              stepId: TOOL_STEP,
              error: { name: "NonJsonOutputError", code: "LOOM_NON_JSON_OUTPUT", stepId: TOOL_STEP },
            });
            expect(run.result, label).toMatchObject({ text: "done" });
            expect(run.blobs, label).toBe(0);
            await expectDefinedState(run, label);
            await run.app.close();
          },
        ),
        runs(120, 10_000),
      );
    },
    timeout(60_000, 3_600_000),
  );

  // Found by this campaign: with execution.claimCheck listing the tool, a non-JSON output is not refused
  // with NonJsonOutputError (ADR 0001 D6). BigInt / cycles / a throwing toJSON fail the step with the raw
  // TypeError / Error of the claim-check's JSON.stringify (no code, no step id); a function or symbol in
  // an output over the cap is silently dropped by JSON.stringify and the output is offloaded and
  // COMPLETED, while the same value under the cap fails. actors/effects/claimCheck.ts claimCheckMiddleware.
  it.each<[string, () => unknown]>([
    ["a BigInt", () => ({ n: 1n })],
    [
      "a cycle",
      () => {
        const o: Record<string, unknown> = { a: 1 };
        o.self = o;
        return o;
      },
    ],
    ["a function in an output over the cap", () => ({ pad: "x".repeat(5_000), f: () => 1 })],
    ["a symbol in an output over the cap", () => ({ pad: "x".repeat(5_000), s: Symbol("s") })],
  ])(
    "with execution.claimCheck, fails a step returning %s with NonJsonOutputError and pins nothing",
    async (_what, output) => {
      const run = await runAgent(output, { variant: "claimCheck" });
      expect(
        run.log.find((r) => r.stepId === TOOL_STEP && (r.type === STEP_FAILED || r.type === STEP_COMPLETED)),
      ).toMatchObject({
        type: STEP_FAILED,
        error: { name: "NonJsonOutputError", code: "LOOM_NON_JSON_OUTPUT", stepId: TOOL_STEP },
      });
      expect(run.blobs).toBe(0);
      await expectDefinedState(run, "claimCheck");
    },
  );

  it(
    "serves a 10 MB output byte for byte, on memory and fs, live and replayed, and offloads it whole with a claim-check",
    async () => {
      const big = { rows: "x".repeat(10 * 1024 * 1024 - 20), tail: "é✓𝄞" };
      for (const kind of ["memory", "fs", "fs+claimCheck"] as const) {
        const dir = await tempDir("big");
        const stores: ClosableStores = kind === "memory" ? memoryStores() : await fsStores({ dir });
        const run = await runAgent(() => big, { stores, variant: kind === "fs+claimCheck" ? "claimCheck" : "plain" });
        expect(run.result, kind).toMatchObject({ text: "done" });
        const completed = run.log.find((r) => r.type === STEP_COMPLETED && r.stepId === TOOL_STEP)!;
        if (kind === "fs+claimCheck") {
          expect(run.blobs).toBe(1);
          expect(await run.app.resolveClaimCheck(completed.output)).toEqual(big);
        } else expect(completed.output, kind).toEqual(big);
        await run.app.close();
        if (kind !== "memory") {
          await stores.close?.();
          const reopened = await fsStores({ dir });
          const again = expandRecords(await reopened.events.read("e"));
          expect(JSON.stringify(again), `${kind}: reopened byte for byte`).toBe(JSON.stringify(run.log));
          await expectDefinedState({ ...run, stores: reopened }, kind);
          await reopened.close();
        }
      }
    },
    timeout(60_000),
  );

  it("fails a step returning 100k levels of nesting with NonJsonOutputError, on memory and fs", async () => {
    for (const kind of ["memory", "fs"] as const) {
      const stores: ClosableStores =
        kind === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("deep") });
      const run = await runAgent(() => deep(100_000), { stores });
      expect(
        run.log.find((r) => r.type === STEP_FAILED),
        kind,
      ).toMatchObject({ error: { code: "LOOM_NON_JSON_OUTPUT", stepId: TOOL_STEP } });
      expect(run.result, kind).toMatchObject({ text: "done" });
      await expectDefinedState(run, kind);
      await run.app.close();
      await stores.close?.();
    }
  });

  // Found by this campaign: 100k-deep output through the claim-check or the redaction layer fails the
  // step with a raw RangeError (stack overflow in JSON.stringify / the recursive redaction walk), not
  // NonJsonOutputError naming the step. actors/effects/claimCheck.ts, actors/effects/chain.ts redactionLayer.
  it.each<Variant>(["claimCheck", "redact"])(
    "fails a 100k-deep output with NonJsonOutputError through the %s layer",
    async (variant) => {
      const run = await runAgent(() => deep(100_000), { variant });
      expect(run.log.find((r) => r.type === STEP_FAILED)).toMatchObject({
        error: { code: "LOOM_NON_JSON_OUTPUT", stepId: TOOL_STEP },
      });
      expect(run.blobs).toBe(0);
      await expectDefinedState(run, variant);
    },
  );
});

// ---------------------------------------------------------------------------------------------------

describe("bad input: lone surrogates and non-UTF-8 bytes", () => {
  it(
    "keeps arbitrary UTF-16 in outputs, and any well-formed execution id and subject, exactly, through fs and a reopen; refuses an id with a lone surrogate",
    async () => {
      await fc.assert(
        // Subjects are well-formed (a lone surrogate in one is refused: issue 13, below); astral code points included.
        // Ids: arbitrary code units (mostly refused) or well-formed code points (kept), so that both are exercised.
        fc.asyncProperty(
          codeUnits(24),
          fc.oneof(codeUnits(12), fc.string({ unit: "binary", maxLength: 12 })),
          fc.string({ unit: "binary", maxLength: 12 }),
          fc.uint8Array({ maxLength: 16 }),
          async (text, id, subject, bytes) => {
            const dir = await tempDir("utf");
            const stores = await fsStores({ dir });
            const executionId = `x${id}`;
            if (/\p{Surrogate}/u.test(executionId)) {
              // No UTF-8 form (PostgreSQL would store it as U+FFFD): every store refuses it, and nothing is written.
              const app = createApp(defineConfig({ stores, effects: agentEffects(() => text), logics: [LOOP] }));
              await expect(app.start(LOOP, { executionId, input: { prompt: "go" } })).rejects.toMatchObject({
                code: "LOOM_MALFORMED_ID",
              });
              expect(await stores.events.listExecutions()).toEqual([]);
              await app.close();
              await stores.close();
              return;
            }
            const invalidUtf8 = new TextDecoder("utf-8").decode(new Uint8Array([0xc3, 0x28, 0xff, ...bytes]));
            const output = { text, [text || "k"]: text, invalidUtf8, bytes: Buffer.from(bytes) };
            const run = await runAgent(() => output, { stores, executionId, subject: `s${subject}` });
            expect(run.result).toMatchObject({ text: "done" });
            const completed = run.log.find((r) => r.type === STEP_COMPLETED && r.stepId === TOOL_STEP)!;
            expect(completed.output).toEqual(JSON.parse(JSON.stringify(output)));
            await run.app.close();
            await stores.close();
            const reopened = await fsStores({ dir });
            expect(JSON.stringify(expandRecords(await reopened.events.read(executionId)))).toBe(
              JSON.stringify(run.log),
            );
            expect((await reopened.events.getExecution(executionId))?.subject).toBe(`s${subject}`);
            await expectDefinedState({ ...run, stores: reopened }, JSON.stringify(text), executionId);
            await reopened.close();
          },
        ),
        runs(25, 1_000),
      );
    },
    timeout(60_000, 3_600_000),
  );
});

// ---------------------------------------------------------------------------------------------------

/** Puts `value` into `json` at the object or array the path walks to (or wraps it beside the json). */
function insertAt(json: unknown, value: unknown, path: number[]): unknown {
  const holder: Record<string, unknown> = { json };
  let node: Record<string, unknown> | unknown[] = holder;
  let key: string | number = "json";
  for (const step of path) {
    const child: unknown = (node as Record<string, unknown>)[key as string];
    if (typeof child !== "object" || child === null) break;
    const keys: (string | number)[] = Array.isArray(child) ? child.map((_, i) => i) : Object.keys(child);
    if (keys.length === 0) break;
    node = child as Record<string, unknown>;
    key = keys[step % keys.length]!;
  }
  const target = (node as Record<string, unknown>)[key as string];
  (node as Record<string, unknown>)[key as string] = Array.isArray(target)
    ? [...target, value]
    : { kept: target ?? null, quote: value };
  return holder.json;
}

describe("bad input: forged claim-check envelopes", () => {
  it(
    "pins nothing with a retained envelope forged anywhere inside a tool's output (listed tool or not, tainted or not): the sweep reclaims what it names",
    async () => {
      const loop = agentLoop$({
        id: "forge",
        model: "model",
        tools: ["listed", "unlisted"],
        maxTurns: 2,
        warnTranscriptBytes: false,
      });
      await fc.assert(
        fc.asyncProperty(
          fc.jsonValue({ maxDepth: 3 }),
          fc.array(fc.nat(), { maxLength: 4 }),
          fc.constantFrom("listed", "unlisted"),
          fc.boolean(),
          async (json, path, tool, taint) => {
            const stores = memoryStores();
            const victim = await stores.content.put(new TextEncoder().encode('"a blob nothing trusted cites"'));
            const forged = { __loomClaimCheck: 1, ref: { __loomContent: victim }, size: 30, retain: true };
            const nested = { data: insertAt(structuredClone(json), forged, path) };
            const output = taint ? tainted(nested, "web") : nested;
            const app = createApp(
              defineConfig({
                stores,
                logics: [loop],
                effects: {
                  model: createLlmEffect(
                    scriptedModel([{ toolCalls: [{ toolName: tool, input: {} }] }, { text: "done" }]),
                  ),
                  listed: createToolEffect(async () => output),
                  unlisted: createToolEffect(async () => output),
                },
                execution: { claimCheck: { store: stores.content, toolIds: ["listed"] } },
              }),
            );
            await app.start(loop, { executionId: "f", input: { prompt: "go" } });
            expect(await app.result("f")).toMatchObject({ text: "done" });
            await sweep(app, { ttlMs: 0 });
            const label = `${tool}${taint ? " (tainted)" : ""}, forged at ${JSON.stringify(path)}`;
            expect(await stores.content.has(victim), `${label}: the forged envelope pinned its blob`).toBe(false);
            // What the claim-check really offloaded (the listed tool's whole output) is kept and resolves.
            const completed = (await app.log("f")).find((r) => r.type === STEP_COMPLETED && r.effectId === tool)!;
            if (tool === "listed")
              expect(await app.resolveClaimCheck(completed.output), label).toEqual(JSON.parse(JSON.stringify(output)));
            await app.close();
          },
        ),
        runs(60, 3_000),
      );
    },
    timeout(60_000, 3_600_000),
  );

  // Found by this campaign: a retained lookalike at the TOP level of an unlisted tool's output is trusted
  // (actors/lifecycle/citations.ts topLevelEnvelopeOf / retainRootsOf / trustedClaimCheckRefsOf trust the position
  // whatever the effect; the preset's envelopesAreData only rewrites listed tools' outputs). Such a tool
  // (an MCP server, a web page echoed by a tool) can pin any blob forever, and, without security.crypto,
  // keep another subject's plaintext blob through eraseSubject (contentDeleted { deleted: 0, retained: 0 }).
  // docs/security.md defends only the nested case. Trust would need the step's effect to be a listed tool.
  const forgeryWorld = (forged: { address: string }) => {
    const stores = memoryStores();
    const loopA = agentLoop$({
      id: "owner",
      model: "model",
      tools: ["fetch"],
      maxTurns: 2,
      warnTranscriptBytes: false,
    });
    const loopB = agentLoop$({
      id: "forger",
      model: "model",
      tools: ["note"],
      maxTurns: 2,
      warnTranscriptBytes: false,
    });
    const app = createApp(
      defineConfig({
        stores,
        logics: [loopA, loopB],
        compliance: { erase: true },
        execution: { claimCheck: { store: stores.content, toolIds: ["fetch"] } },
        effects: {
          model: createLlmEffect(
            scriptedModel((request, call) =>
              call === 0 ? { toolCalls: [{ toolName: request.tools[0]!.name, input: {} }] } : { text: "done" },
            ),
          ),
          fetch: createToolEffect(async () => ({
            secret: "CANARY-A",
            rows: Array.from({ length: 40 }, (_, i) => `A's row ${i}, over the inline cap`),
          })),
          note: createToolEffect(async () => ({
            __loomClaimCheck: 1,
            ref: { __loomContent: forged.address },
            size: 9,
            retain: true,
          })),
        },
      }),
    );
    return { stores, app, loopA, loopB };
  };

  it("does not let an unlisted tool pin a blob with a retained envelope at the top of its output", async () => {
    const forged = { address: "" };
    const { stores, app, loopB } = forgeryWorld(forged);
    forged.address = await stores.content.put(new TextEncoder().encode('"nothing trusted cites this"'));
    await app.start(loopB, { executionId: "b1", subject: "B", input: { prompt: "go" } });
    await app.result("b1");
    await sweep(app, { ttlMs: 0 });
    expect(await stores.content.has(forged.address)).toBe(false);
  });

  it("erases a subject's blob that another subject's unlisted tool names in a top-level lookalike (no security.crypto)", async () => {
    const forged = { address: "" };
    const { stores, app, loopA, loopB } = forgeryWorld(forged);
    await app.start(loopA, { executionId: "a1", subject: "A", input: { prompt: "go" } });
    await app.result("a1");
    const fetched = (await app.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!;
    forged.address = (fetched.output as { ref: { __loomContent: string } }).ref.__loomContent;
    await app.start(loopB, { executionId: "b1", subject: "B", input: { prompt: "go" } });
    await app.result("b1");
    await eraseSubject(app, "A");
    expect(await stores.content.has(forged.address), "A's plaintext blob outlived A's erasure").toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------
// Found by this campaign: what the app journals on the caller's behalf is not checked for JSON.
// actors/app.ts start (options.input) and actors/journal/execution.ts send (the event) pass it to the store as is:
// on memory (and IndexedDB, structured clone) a BigInt or a cycle is journaled, so the log is no longer
// JSON (ADR 0001 D2) and a Date or a Map reaches the live run as itself but a replay as a string or {};
// on fs the store's JSON.stringify throws a raw TypeError, and for an event that error FAILS the running
// execution (app.result rejects with the TypeError) although nothing was journaled.

describe("bad input: non-JSON input and events from the caller", () => {
  const cycle = () => {
    const o: Record<string, unknown> = { topic: "t" };
    o.self = o;
    return o;
  };
  it.each<[string, () => unknown]>([
    ["a BigInt", () => ({ topic: "t", n: 1n })],
    ["a cycle", cycle],
    ["a function", () => ({ topic: "t", f: () => 1 })],
  ])(
    "app.start refuses an input holding %s with a typed error and journals nothing (memory and fs)",
    async (_what, input) => {
      for (const kind of ["memory", "fs"] as const) {
        const stores: ClosableStores =
          kind === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("input") });
        const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
        const error = await app.start(demoMachine, { executionId: "i", input: input() }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isTyped(error), `${kind}: ${String(error)}`).toBe(true);
        expect(String((error as Error).message), kind).toMatch(/input/);
        expect(await stores.events.head("i"), kind).toBe(0);
        await app.close();
        await stores.close?.();
      }
    },
  );

  it("refuses an event holding a BigInt with a typed error and keeps the execution running (memory and fs)", async () => {
    for (const kind of ["memory", "fs"] as const) {
      const stores: ClosableStores =
        kind === "memory" ? memoryStores() : await fsStores({ dir: await tempDir("event") });
      const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
      const actor = await app.start(demoMachine, { executionId: "v", input: { topic: "owls" } });
      await actor.settled();
      const error = await actor.sendAsync({ type: "APPROVE", n: 1n }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isTyped(error), `${kind}: ${String(error)}`).toBe(true);
      await actor.sendAsync({ type: "APPROVE" });
      await actor.settled();
      await expect(app.result("v"), kind).resolves.toMatchObject({ approved: true });
      const log = await app.log("v");
      expect(JSON.parse(JSON.stringify(log)), kind).toEqual(log);
      await app.close();
      await stores.close?.();
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Issue 13, "Bad input: a typed error naming the value, and nothing written". Each case failed on the
// code before the issue (accepted and journaled, silently converted, or a raw TypeError / RangeError).

describe("bad input: a typed error naming the value, and nothing written", () => {
  const storesOf = async (kind: "memory" | "fs"): Promise<ClosableStores> =>
    kind === "memory" ? memoryStores() : fsStores({ dir: await tempDir("i13") });
  const rejection = <T>(promise: Promise<T>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );
  const written = async (stores: Stores) => (await stores.events.listExecutions()).length;

  // A subject is a non-empty string of at most MAX_SUBJECT_BYTES (256) UTF-8 bytes.
  const BAD_SUBJECTS: [string, unknown][] = [
    ['""', ""],
    ['["a"]', ["a"]],
    ["42", 42],
    ["{}", {}],
    ["null", null],
    ["true", true],
    ["257 bytes", "s".repeat(257)],
    ["129 two-byte characters (258 bytes)", "é".repeat(129)],
    ["with a lone high surrogate", "user-\ud800"],
    ["with a lone low surrogate", "\udc00user"],
  ];

  it.each(BAD_SUBJECTS)(
    "app.start refuses subject %s with ConfigError start.subject and writes nothing (memory and fs)",
    async (shown, subject) => {
      for (const kind of ["memory", "fs"] as const) {
        const stores = await storesOf(kind);
        const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
        const error = await rejection(
          app.start(demoMachine, { executionId: "s", subject: subject as string, input: { topic: "t" } }),
        );
        expect(error, `${kind} ${shown}`).toBeInstanceOf(ConfigError);
        expect(error, `${kind} ${shown}`).toMatchObject({ path: "start.subject" });
        expect((error as Error).message, `${kind} ${shown}: the message names the value`).toContain(
          subject === "" ? '""' : String(JSON.stringify(subject)).slice(0, 20),
        );
        expect(await written(stores), `${kind} ${shown}: nothing written`).toBe(0);
        await app.close();
        await stores.close?.();
      }
    },
  );

  it.each(BAD_SUBJECTS)(
    "eraseSubject and exportSubject refuse subject %s with ConfigError naming the call, and write nothing",
    async (shown, subject) => {
      const stores = memoryStores();
      const app = createApp(
        defineConfig({ stores, effects: countedDemoEffects().effects, compliance: { erase: true } }),
      );
      await app.start(demoMachine, { executionId: "kept", subject: "A", input: { topic: "t" } });
      const erase = await rejection(eraseSubject(app, subject as string));
      expect(erase, shown).toBeInstanceOf(ConfigError);
      expect(erase, shown).toMatchObject({ path: "eraseSubject.subject" });
      const exported = await rejection(exportSubject(app, subject as string));
      expect(exported, shown).toBeInstanceOf(ConfigError);
      expect(exported, shown).toMatchObject({ path: "exportSubject.subject" });
      expect(
        (await stores.events.listExecutions()).map((info) => info.executionId),
        `${shown}: nothing but "kept" written`,
      ).toEqual(["kept"]);
      await app.close();
    },
  );

  it.each(BAD_SUBJECTS)(
    "invokeTransient refuses subject %s with ConfigError invokeTransient.subject and runs nothing",
    async (shown, subject) => {
      const counted = countedDemoEffects();
      const app = createApp(defineConfig({ stores: memoryStores(), effects: counted.effects }));
      const error = await rejection(app.invokeTransient("research", { topic: "t" }, { subject: subject as string }));
      expect(error, shown).toBeInstanceOf(ConfigError);
      expect(error, shown).toMatchObject({ path: "invokeTransient.subject" });
      expect(counted.runs.size, `${shown}: the effect did not run`).toBe(0);
      await app.close();
    },
  );

  it("accepts a subject of exactly 256 UTF-8 bytes, and exports and erases it", async () => {
    const subject = `${"é".repeat(127)}xx`;
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects, compliance: { erase: true } }));
    const actor = await app.start(demoMachine, { executionId: "s", subject, input: { topic: "t" } });
    await actor.settled();
    expect((await exportSubject(app, subject)).executions.map((e) => e.executionId)).toEqual(["s"]);
    await expect(eraseSubject(app, subject)).resolves.toBeDefined();
    await app.close();
  });

  // Values JSON would convert silently (Map to {}, NaN to null, a typed array to { "0": .. }).
  const NOT_JSON: [string, () => unknown, RegExp][] = [
    ["a Map", () => new Map([["k", 1]]), /a Map/],
    ["a Set", () => new Set([1]), /a Set/],
    ["a Uint8Array", () => new Uint8Array([1, 2]), /a Uint8Array/],
    ["a Float64Array", () => new Float64Array([1.5]), /a Float64Array/],
    ["an ArrayBuffer", () => new ArrayBuffer(4), /an ArrayBuffer/],
    ["a RegExp", () => /owls/g, /a RegExp/],
    ["an Error", () => new Error("lost message"), /an Error/],
    [
      "a class instance keeping its data in private fields",
      () =>
        new (class Celsius {
          #c = 21;
          get celsius() {
            return this.#c;
          }
        })(),
      /an instance of Celsius with no own fields/,
    ],
    ["a URLSearchParams", () => new URLSearchParams("q=owls"), /an instance of URLSearchParams with no own fields/],
    ["a DataView", () => new DataView(new ArrayBuffer(2)), /a DataView/],
    ["an invalid Date", () => new Date(Number.NaN), /an invalid Date/],
    ["NaN", () => Number.NaN, /NaN/],
    ["Infinity", () => Number.POSITIVE_INFINITY, /Infinity/],
    ["-Infinity", () => Number.NEGATIVE_INFINITY, /-Infinity/],
  ];
  const nested = (value: unknown) => ({ topic: "t", items: [0, 1, 2, { when: value }] });

  /** Follows a path as the refusal prints it (`input.a[3]["my key"]`) from `root`, by own properties only. */
  function follow(root: unknown, path: string): { found: boolean; value?: unknown } {
    const SEGMENT = /\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/gy;
    let node = root;
    let match: RegExpExecArray | null;
    let at = 0;
    while (at < path.length && (match = SEGMENT.exec(path))) {
      const key = match[1] ?? (match[2] !== undefined ? Number(match[2]) : (JSON.parse(match[3]!) as string));
      if (typeof node !== "object" || node === null || !Object.prototype.hasOwnProperty.call(node, key))
        return { found: false };
      node = Object.getOwnPropertyDescriptor(node, key)!.value;
      at = SEGMENT.lastIndex;
    }
    return at === path.length ? { found: true, value: node } : { found: false };
  }

  /** Puts `value` at the object or array the path walks to, as an own property even for "__proto__". */
  function plantAt(json: unknown, value: unknown, path: number[]): unknown {
    const holder: Record<string, unknown> = { json };
    let node: object = holder;
    let key: string | number = "json";
    for (const step of path) {
      const child = Object.getOwnPropertyDescriptor(node, key)!.value as unknown;
      if (typeof child !== "object" || child === null) break;
      const keys: (string | number)[] = Array.isArray(child) ? child.map((_, i) => i) : Object.keys(child);
      if (keys.length === 0) break;
      node = child;
      key = keys[step % keys.length]!;
    }
    Object.defineProperty(node, key, {
      value: { kept: 1, poison: value },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return holder.json;
  }

  const POISONS: [string, () => unknown][] = [
    ["Map", () => new Map([[1, 2]])],
    ["Set", () => new Set(["a"])],
    ["Uint8Array", () => new Uint8Array([1])],
    ["DataView", () => new DataView(new ArrayBuffer(2))],
    ["RegExp", () => /x/],
    ["Error", () => new TypeError("t")],
    [
      "class instance without own fields",
      () =>
        new (class Owl {
          #name = "barn";
          get name() {
            return this.#name;
          }
        })(),
    ],
    ["URLSearchParams", () => new URLSearchParams("q=owls")],
    ["invalid Date", () => new Date(Number.NaN)],
    ["NaN", () => Number.NaN],
    ["Infinity", () => Number.POSITIVE_INFINITY],
    ["-Infinity", () => Number.NEGATIVE_INFINITY],
    ["BigInt", () => 7n],
    ["function", () => () => 1],
    ["symbol", () => Symbol("s")],
  ];

  it(
    "refuses any start input hiding a value with no faithful JSON form with ConfigError whose path leads to it; keeps plain JSON exactly (generated)",
    async () => {
      const tally = { refused: 0, kept: 0 };
      await fc.assert(
        fc.asyncProperty(
          fc.jsonValue({ maxDepth: 4 }),
          fc.option(fc.constantFrom(...POISONS), { nil: undefined }),
          fc.array(fc.nat(), { maxLength: 5 }),
          async (json, poison, path) => {
            const stores = memoryStores();
            const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
            const planted = poison ? poison[1]() : undefined;
            const value = poison ? plantAt(structuredClone(json), planted, path) : json;
            const input = { topic: "t", value };
            const label = `${poison?.[0] ?? "plain JSON"} at ${JSON.stringify(path)} in ${fc.stringify(json).slice(0, 200)}`;
            const error = await rejection(app.start(demoMachine, { executionId: "p", input }));
            if (poison) {
              tally.refused++;
              expect(error, label).toBeInstanceOf(ConfigError);
              expect(error, label).toMatchObject({ path: "start.input" });
              const printed = / at (input(?:\.[A-Za-z_$][\w$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*)(?:;|\.$)/.exec(
                (error as Error).message,
              )?.[1];
              expect(printed, `${label}: ${(error as Error).message}`).toBeDefined();
              const reached = follow({ input }, printed!.replace(/^input/, ".input"));
              expect(reached.found, `${label}: the path ${printed} leads nowhere`).toBe(true);
              // The path names the planted value itself, or (a function or symbol) the property holding it.
              const poisonOf = (node: unknown) => (node as { poison?: unknown } | null)?.poison;
              expect(
                Object.is(reached.value, planted) || Object.is(poisonOf(reached.value), planted),
                `${label}: ${printed} is not the planted value`,
              ).toBe(true);
              expect(await stores.events.head("p"), label).toBe(0);
            } else {
              tally.kept++;
              expect(error, label).toBeUndefined();
              const started = (await stores.events.read("p"))[0]!;
              expect(JSON.stringify(started.input), label).toBe(JSON.stringify(JSON.parse(JSON.stringify(input))));
            }
            await app.close();
          },
        ),
        runs(300, 20_000),
      );
      console.info(`[campaign 7] generated start inputs: ${JSON.stringify(tally)}`);
      expect(tally.refused).toBeGreaterThan(0);
      expect(tally.kept).toBeGreaterThan(0);
    },
    timeout(60_000, 3_600_000),
  );

  it.each(NOT_JSON)(
    "app.start refuses an input holding %s with ConfigError naming its path, journals nothing (memory and fs)",
    async (_what, make, reason) => {
      for (const kind of ["memory", "fs"] as const) {
        const stores = await storesOf(kind);
        const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
        const error = await rejection(app.start(demoMachine, { executionId: "i", input: nested(make()) }));
        expect(error, kind).toBeInstanceOf(ConfigError);
        expect(error, kind).toMatchObject({ path: "start.input" });
        expect((error as Error).message, kind).toMatch(reason);
        expect((error as Error).message, kind).toContain("input.items[3].when");
        expect(await written(stores), kind).toBe(0);
        await app.close();
        await stores.close?.();
      }
    },
  );

  it.each(NOT_JSON)(
    "sendAsync refuses an event holding %s with ConfigError naming its path; nothing journaled, the run goes on",
    async (_what, make, reason) => {
      const stores = memoryStores();
      const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
      const actor = await app.start(demoMachine, { executionId: "v", input: { topic: "owls" } });
      await actor.settled();
      const head = await stores.events.head("v");
      const error = await rejection(actor.sendAsync({ type: "APPROVE", payload: { at: [make()] } }));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ path: "send.event" });
      expect((error as Error).message).toMatch(reason);
      expect((error as Error).message).toContain("event.payload.at[0]");
      expect(await stores.events.head("v")).toBe(head);
      await actor.sendAsync({ type: "APPROVE" });
      await actor.settled();
      await expect(app.result("v")).resolves.toMatchObject({ approved: true });
      await app.close();
    },
  );

  it.each(
    NOT_JSON.flatMap(([what, make, reason]) =>
      (["plain", "claimCheck", "redact"] as const).map((variant) => [what, variant, make, reason] as const),
    ),
  )(
    "fails a tool step returning %s with NonJsonOutputError naming the step and the path (%s app); nothing offloaded",
    async (_what, variant, make, reason) => {
      const run = await runAgent(() => ({ rows: [{ ok: 1 }, { when: make() }] }), { variant });
      const failed = run.log.find(
        (r) => r.stepId === TOOL_STEP && (r.type === STEP_FAILED || r.type === STEP_COMPLETED),
      );
      expect(failed).toMatchObject({
        type: STEP_FAILED,
        error: { name: "NonJsonOutputError", code: "LOOM_NON_JSON_OUTPUT", stepId: TOOL_STEP },
      });
      const message = (failed!.error as { message: string }).message;
      expect(message).toMatch(reason);
      expect(message).toContain("output.rows[1].when");
      expect(run.blobs).toBe(0);
      expect(run.result).toMatchObject({ text: "done" });
      await expectDefinedState(run, variant);
      await run.app.close();
    },
  );

  it("converts a value with toJSON by its toJSON (a Date to its ISO string, a Buffer to { type, data }), the same live and replayed", async () => {
    const output = {
      when: new Date(Date.UTC(2026, 0, 2)),
      bytes: Buffer.from([1, 2]),
      custom: { toJSON: () => ({ kept: [1, 2] }) },
    };
    const run = await runAgent(() => output);
    const completed = run.log.find((r) => r.type === STEP_COMPLETED && r.stepId === TOOL_STEP)!;
    expect(completed.output).toEqual({
      when: "2026-01-02T00:00:00.000Z",
      bytes: { type: "Buffer", data: [1, 2] },
      custom: { kept: [1, 2] },
    });
    await expectDefinedState(run, "toJSON");
    await run.app.close();
  });

  it("journals a class instance with own fields as those fields, as JSON does, live and replayed", async () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
      norm() {
        return Math.hypot(this.x, this.y);
      }
    }
    const run = await runAgent(() => ({ at: new Point(3, 4) }));
    const completed = run.log.find((r) => r.type === STEP_COMPLETED && r.stepId === TOOL_STEP)!;
    expect(completed.output).toEqual({ at: { x: 3, y: 4 } });
    await expectDefinedState(run, "class instance");
    await run.app.close();
  });

  it("refuses a value whose toJSON throws, or returns a Map, naming the path", async () => {
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
    const threw = await rejection(
      app.start(demoMachine, {
        executionId: "j",
        input: {
          topic: "t",
          x: {
            toJSON: () => {
              throw new Error("boom");
            },
          },
        },
      }),
    );
    expect(threw).toBeInstanceOf(ConfigError);
    expect((threw as Error).message).toMatch(/a toJSON\(\) that threw "boom" at input\.x/);
    const map = await rejection(
      app.start(demoMachine, { executionId: "j", input: { topic: "t", x: { toJSON: () => new Map() } } }),
    );
    expect((map as Error).message).toMatch(/a Map at input\.x/);
    expect(await written(stores)).toBe(0);
    await app.close();
  });

  it("names a key that is not an identifier in the path, quoted", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countedDemoEffects().effects }));
    const error = await rejection(
      app.start(demoMachine, { executionId: "q", input: { topic: "t", "my key": { "0": NaN } } }),
    );
    expect((error as Error).message).toContain('input["my key"]["0"]');
    await app.close();
  });

  it("keeps a JSON value exactly (key order, __proto__ as a plain key, -0 as 0, lone surrogates, sparse arrays as null)", async () => {
    const input = JSON.parse(
      '{"topic":"t","b":1,"a":{"__proto__":{"x":1},"2":"two","1":"one"},"s":"\\ud800","z":-0}',
    ) as Record<string, unknown>;
    (input as { holes: unknown[] }).holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
    await app.start(demoMachine, { executionId: "k", input });
    const started = (await stores.events.read("k"))[0]!;
    expect(JSON.stringify(started.input)).toBe(JSON.stringify(JSON.parse(JSON.stringify(input))));
    expect(Object.getPrototypeOf((started.input as { a: object }).a)).toBe(Object.prototype);
    await app.close();
  });

  // agentLoop$'s input is { prompt: string } or { messages: Message[] }: refused at start, nothing written.
  it.each<[string, unknown]>([
    ["undefined", undefined],
    ["null", null],
    ["42", 42],
    ["{}", {}],
    ["{ prompt: 5 }", { prompt: 5 }],
    ['{ messages: "hi" }', { messages: "hi" }],
    ["[]", []],
  ])(
    "app.start of an agentLoop$ refuses input %s with ConfigError start.input naming the loop; nothing written",
    async (shown, input) => {
      const stores = memoryStores();
      const warnings: Warning[] = [];
      const app = createApp(
        defineConfig({ stores, effects: agentEffects(() => "x"), observability: { onWarn: (w) => warnings.push(w) } }),
      );
      const error = await rejection(app.start(LOOP, { executionId: "l", input }));
      expect(error, shown).toBeInstanceOf(ConfigError);
      expect(error, shown).toMatchObject({ path: "start.input" });
      expect((error as Error).message, shown).toContain('agentLoop$ "bad"');
      expect(await written(stores), shown).toBe(0);
      expect(warnings, shown).toEqual([]);
      await app.close();
    },
  );

  // A model reply that is not { text?: string, toolCalls?: { toolName: string, input }[] }.
  it.each<[string, unknown, string]>([
    ["undefined", undefined, "reply"],
    ["null", null, "reply"],
    ["a number", 5, "reply"],
    ["an array", [{ text: "hi" }], "reply"],
    ["text that is not a string", { text: 5 }, "text"],
    ["toolCalls that is not an array", { toolCalls: "search" }, "toolCalls"],
    ["toolCalls holding a number", { toolCalls: [1] }, "toolCalls[0]"],
    [
      "a tool call without toolName",
      { toolCalls: [{ toolName: "tool", input: {} }, { input: {} }] },
      "toolCalls[1].toolName",
    ],
  ])(
    "a model replying %s fails the run with ModelReplyError naming the step and the field",
    async (shown, reply, field) => {
      const stores = memoryStores();
      const app = createApp(
        defineConfig({
          stores,
          effects: {
            model: createLlmEffect({ id: "odd", generate: async () => reply as never }),
            tool: createToolEffect(async () => "x"),
          },
        }),
      );
      await app.start(LOOP, { executionId: "m", input: { prompt: "go" } });
      const error = await rejection(app.result("m"));
      expect(error, shown).toMatchObject({
        error: { name: "ModelReplyError", code: "LOOM_MODEL_REPLY", stepId: "bad#turn:0:model", field },
      });
      expect((error as Error).message, shown).toContain(`bad#turn:0:model`);
      const failed = (await app.log("m")).find((r) => r.type === STEP_FAILED);
      expect(failed, shown).toMatchObject({ stepId: "bad#turn:0:model", error: { name: "ModelReplyError", field } });
      await app.close();
    },
  );

  it.each<[string, Parameters<typeof scriptedModel>[0], RegExp]>([
    ["an undefined reply", [undefined as never], /reply 0 of the script is undefined/],
    [
      "a script that ran out",
      [{ toolCalls: [{ toolName: "tool", input: {} }] }],
      /no reply scripted for call 1 \(the script has 1;/,
    ],
    ["a function returning undefined", () => undefined as never, /script\(request, 0\) returned undefined/],
  ])(
    "scriptedModel with %s fails with ModelReplyError naming the step, not a RangeError",
    async (_shown, script, message) => {
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          effects: { model: createLlmEffect(scriptedModel(script)), tool: createToolEffect(async () => "x") },
        }),
      );
      await app.start(LOOP, { executionId: "m", input: { prompt: "go" } });
      const error = (await rejection(app.result("m"))) as { error: { name: string; message: string; stepId: string } };
      expect(error.error.name).toBe("ModelReplyError");
      expect(error.error.stepId).toMatch(/^bad#turn:\d:model$/);
      expect(error.error.message).toMatch(message);
      await app.close();
    },
  );

  it("exports ModelReplyError from the public entry point", async () => {
    const index = await import("../../index.js");
    expect(index.ModelReplyError).toBe(ModelReplyError);
    expect(new ModelReplyError("l#turn:0:model", "toolCalls", "not an array")).toMatchObject({
      code: "LOOM_MODEL_REPLY",
      stepId: "l#turn:0:model",
      field: "toolCalls",
    });
  });

  it("a run whose input fails at once does not warn about state growth ('reached undefined bytes')", async () => {
    // A journal whose input the loop cannot take (written before app.start refused it, or by the pure
    // machine, which has no start-time check): on resume its first macrostep fails the run at once.
    const config = { id: "grow", model: "model", tools: ["tool"], maxTurns: 3 };
    const pure = createAgentLoopMachine({ ...config, tools: [{ name: "tool" }] });
    const stores = memoryStores();
    const writer = createApp(
      defineConfig({ stores, effects: agentEffects(() => "x"), observability: { onWarn: () => undefined } }),
    );
    await writer.start(pure, { executionId: "g", input: null });
    await rejection(writer.result("g"));
    await writer.close();
    expect((await stores.events.read("g")).at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "error" });
    const warnings: Warning[] = [];
    const loop = agentLoop$(config);
    const app = createApp(
      defineConfig({
        stores,
        effects: agentEffects(() => "x"),
        logics: [loop],
        observability: { onWarn: (w) => warnings.push(w) },
      }),
    );
    await app.resume("g");
    await rejection(app.result("g"));
    expect(warnings.map((w) => w.message).join("\n")).not.toContain("undefined bytes");
    expect(warnings.filter((w) => w.code === "LOOM_AGENT_STATE_GROWTH")).toEqual([]);
    await app.close();
  });

  it("after app.close(), sendAsync rejects with AppClosedError and send warns through onWarn; nothing is written (memory and fs)", async () => {
    for (const kind of ["memory", "fs"] as const) {
      const stores = await storesOf(kind);
      const warnings: Warning[] = [];
      const app = createApp(
        defineConfig({
          stores,
          effects: countedDemoEffects().effects,
          observability: { onWarn: (w) => warnings.push(w) },
        }),
      );
      const actor = await app.start(demoMachine, { executionId: "c", input: { topic: "owls" } });
      await actor.settled();
      const head = await stores.events.head("c");
      await app.close();
      const error = await rejection(actor.sendAsync({ type: "APPROVE" }));
      expect(error, kind).toBeInstanceOf(AppClosedError);
      expect(error, kind).toMatchObject({ code: "LOOM_APP_CLOSED" });
      expect((error as Error).message, kind).toContain('"c"');
      expect(() => actor.send({ type: "APPROVE" }), `${kind}: send does not throw`).not.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(
        warnings.filter((w) => w.code === "LOOM_APP_CLOSED"),
        kind,
      ).toMatchObject([{ executionId: "c", eventType: "APPROVE" }]);
      expect(await stores.events.head("c"), `${kind}: nothing written`).toBe(head);
      await stores.close?.();
    }
  });

  it("a sendAsync queued before app.close() and reached after it rejects with AppClosedError; nothing of it is written", async () => {
    let gate: (() => void) | undefined;
    class HeldAppends extends ForwardingEventStore {
      hold = false;
      override async append(id: string, expected: number, records: StoredRecord[]) {
        if (this.hold) await new Promise<void>((resolve) => (gate = resolve));
        return super.append(id, expected, records);
      }
    }
    const inner = memoryStores();
    const events = new HeldAppends(inner.events);
    const stores = { ...inner, events };
    const app = createApp(defineConfig({ stores, effects: countedDemoEffects().effects }));
    const actor = await app.start(demoMachine, { executionId: "q", input: { topic: "owls" } });
    await actor.settled();
    events.hold = true;
    const first = actor.sendAsync({ type: "APPROVE" }); // its append is held
    const second = actor.sendAsync({ type: "REJECT" }); // waits in the mailbox behind it
    await new Promise((resolve) => setTimeout(resolve, 10));
    const closed = app.close();
    events.hold = false;
    gate!();
    await first.catch(() => undefined);
    const error = await rejection(second);
    expect(error).toBeInstanceOf(AppClosedError);
    expect((error as Error).message).toContain('"REJECT"');
    await closed;
    expect(
      (await inner.events.read("q"))
        .filter((r) => r.type === "loom.event.received")
        .map((r) => (r.event as { type: string }).type),
    ).not.toContain("REJECT");
  });

  it("send of an event the journal refuses (not JSON) warns through onWarn instead of dropping it silently", async () => {
    const warnings: Warning[] = [];
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: countedDemoEffects().effects,
        observability: { onWarn: (w) => warnings.push(w) },
      }),
    );
    const actor = await app.start(demoMachine, { executionId: "w", input: { topic: "owls" } });
    await actor.settled();
    const head = await stores.events.head("w");
    actor.send({ type: "APPROVE", at: new Map() });
    await actor.settled();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings.filter((w) => w.code === "LOOM_SEND_FAILED")).toMatchObject([
      { executionId: "w", eventType: "APPROVE", errorCode: "LOOM_CONFIG" },
    ]);
    expect(await stores.events.head("w")).toBe(head);
    await app.close();
  });
});
