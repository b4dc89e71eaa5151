// The app's one warning path (actors/warnings.ts, docs/observability.md "Warnings"): every warning code
// the runtime reports reaches the bus's "warn" event and observability.onWarn exactly once, and nothing
// but the sink emits "warn".
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sendParent, setup } from "xstate";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp, type App } from "../../actors/app.js";
import { createReadModels } from "../../actors/journal/appReadModels.js";
import type { Warning } from "../../actors/bus.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import { WARNING_CODES } from "../../actors/constants.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { memoryStores } from "../../stores/memory.js";
import type { Stores, StoredRecord } from "../../stores/types.js";
import { ForwardingEventStore, until, withEvents } from "../support/harness.js";
import { oneStep } from "./helpers.js";
import { runSchedules } from "../../schedules.js";

afterEach(() => vi.restoreAllMocks());

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

type Config = Omit<LoomConfig, "stores" | "observability"> & {
  stores?: Stores;
  observability?: Omit<NonNullable<LoomConfig["observability"]>, "onWarn">;
};

/** An app whose warnings are recorded as observability.onWarn and the bus hear them. */
function watched(config: Config): { app: App; heard: Warning[]; onBus: Warning[] } {
  const heard: Warning[] = [];
  const app = createApp(
    defineConfig({
      stores: memoryStores(),
      ...config,
      observability: { ...config.observability, onWarn: (w) => heard.push(w) },
    }),
  );
  const onBus: Warning[] = [];
  app.on("warn", (w) => onBus.push(w));
  return { app, heard, onBus };
}

const search = createToolEffect(async () => "x".repeat(64));

/** Each code the app reports, provoked once, cheaply. */
const PROVOKED: Partial<Record<string, () => Promise<{ heard: Warning[]; onBus: Warning[] }>>> = {
  [WARNING_CODES.agentStateGrowth]: async () => {
    const w = watched({ effects: { model: createLlmEffect(scriptedModel([{ text: "a long enough reply" }])) } });
    await w.app.start(agentLoop$({ id: "grows", model: "model", warnTranscriptBytes: 8 }), {
      executionId: "g",
      input: { prompt: "go" },
    });
    await w.app.result("g");
    return w;
  },
  [WARNING_CODES.scheduleNotFired]: async () => {
    // A due schedule whose logic this app does not hold: the tick waits, warned once (looked at again later).
    const stores = memoryStores();
    await stores.schedules!.put(
      {
        id: "orphan",
        logicId: "not-held-here",
        spec: { every: 60_000 },
        input: null,
        overlap: "skip",
        catchUp: "latest",
        paused: false,
        createdAt: 0,
        nextAt: 60_000,
        skipped: 0,
        missed: 0,
        revision: 1,
      },
      0,
    );
    const w = watched({ stores, effects: {} });
    runSchedules(w.app);
    await until(() => w.heard.length >= 1);
    await w.app.close();
    return w;
  },
  [WARNING_CODES.subscriber]: async () => {
    const w = watched({ effects: { search } });
    const actor = await w.app.start(oneStep("search"), { executionId: "s" });
    let thrown = false;
    actor.subscribe(() => {
      if (thrown) return;
      thrown = true;
      throw new Error("subscriber bug");
    });
    await w.app.result("s");
    return w;
  },
  [WARNING_CODES.listenerFailed]: async () => {
    const w = watched({ effects: { search } });
    let thrown = false;
    w.app.on("append", () => {
      if (thrown) return;
      thrown = true;
      throw new Error("listener bug");
    });
    await w.app.start(oneStep("search"), { executionId: "l" });
    await w.app.result("l");
    return w;
  },
  [WARNING_CODES.actionFailed]: async () => {
    // An action of the macrostep that ended the execution throws: its end is journaled already, the throw is reported.
    const w = watched({ effects: {} });
    const ends = setup({}).createMachine({
      id: "ends",
      initial: "idle",
      states: {
        idle: { on: { GO: "done" } },
        done: {
          type: "final",
          entry: () => {
            throw new Error("action bug");
          },
        },
      },
    });
    const actor = await w.app.start(ends, { executionId: "a" });
    await actor.sendAsync({ type: "GO" });
    await w.app.result("a");
    return w;
  },
  [WARNING_CODES.messageUndelivered]: async () => {
    // The parent's journal refuses the message its child sends it: the child reports it (a resume re-sends it).
    const stores = memoryStores();
    const refusing = new (class extends ForwardingEventStore {
      override append(id: string, expected: number, records: StoredRecord[]) {
        if (records.some((r) => r.from !== undefined)) return Promise.reject(new Error("disk full"));
        return this.inner.append(id, expected, records);
      }
    })(stores.events);
    const w = watched({ effects: {}, stores: withEvents(stores, refusing) });
    const child = setup({}).createMachine({ id: "child", entry: sendParent({ type: "HI" }) });
    const parent = setup({ actors: { child } }).createMachine({ id: "parent", invoke: { id: "c", src: "child" } });
    await w.app.start(parent, { executionId: "m" });
    await until(() => w.heard.some((x) => x.code === WARNING_CODES.messageUndelivered));
    return w;
  },
  [WARNING_CODES.effectClose]: async () => {
    const closing = { ...search, close: () => Promise.reject(new Error("would not end")) };
    const w = watched({ effects: { closing } });
    await w.app.close();
    return w;
  },
  [WARNING_CODES.inspectFailed]: async () => {
    let thrown = false;
    const w = watched({
      effects: { search },
      observability: {
        inspect: () => {
          if (thrown) return;
          thrown = true;
          throw new Error("inspector bug");
        },
      },
    });
    await w.app.start(oneStep("search"), { executionId: "i" });
    await w.app.result("i");
    return w;
  },
  [WARNING_CODES.modelUsageMissing]: async () => {
    const w = watched({
      effects: { model: createLlmEffect(scriptedModel([{ text: "one" }, { text: "two" }])) },
      capabilities: { quotas: { maxTokens: 1000 } },
    });
    await w.app.start(agentLoop$({ id: "a", model: "model", warnTranscriptBytes: false }), {
      executionId: "u1",
      input: { prompt: "go" },
    });
    await w.app.result("u1");
    await w.app.start(agentLoop$({ id: "b", model: "model", warnTranscriptBytes: false }), {
      executionId: "u2",
      input: { prompt: "go" },
    });
    await w.app.result("u2");
    return w;
  },
  [WARNING_CODES.claimCheckOnOffload]: async () => {
    const stores = memoryStores();
    const model = createLlmEffect(
      scriptedModel([{ toolCalls: [{ toolName: "search", input: {} }] }, { text: "done" }]),
    );
    const w = watched({
      stores,
      effects: { model, search },
      execution: {
        claimCheck: {
          store: stores.content,
          toolIds: ["search"],
          inlineCapBytes: 8,
          onOffload: () => {
            throw new Error("hook bug");
          },
        },
      },
    });
    await w.app.start(agentLoop$({ id: "cc", model: "model", tools: ["search"], warnTranscriptBytes: false }), {
      executionId: "c",
      input: { prompt: "go" },
    });
    await w.app.result("c");
    return w;
  },
  [WARNING_CODES.snapshot]: async () => {
    const stores = memoryStores();
    stores.events.putSnapshot = () => Promise.reject(new Error("disk full"));
    const w = watched({ stores, effects: {}, execution: { snapshotOnClose: true } });
    // A graceful close snapshots each running execution once.
    await w.app.start(waitsForEvent, { executionId: "snap" });
    await w.app.close();
    return w;
  },
  [WARNING_CODES.readModelFailed]: async () => {
    const stores = memoryStores();
    stores.events.listExecutions = () => Promise.reject(new Error("catalogue down"));
    const w = watched({ stores, effects: { search } });
    const models = createReadModels(w.app);
    await models.ready.catch(() => undefined);
    models.dispose();
    await until(() => w.heard.length >= 1);
    return w;
  },
  [WARNING_CODES.appClosed]: async () => {
    const w = watched({ effects: {} });
    const waiting = await w.app.start(waitsForEvent, { executionId: "c2" });
    await w.app.close();
    waiting.send({ type: "GO" });
    await until(() => w.heard.length >= 1);
    return w;
  },
  [WARNING_CODES.sendFailed]: async () => {
    const w = watched({ effects: {} });
    const waiting = await w.app.start(waitsForEvent, { executionId: "f" });
    waiting.send({ type: "xstate.reserved" });
    await until(() => w.heard.length >= 1);
    return w;
  },
};

/** Codes that do not go through an app's sink here, and why. */
const NOT_HERE: Record<string, string> = {
  [WARNING_CODES.snapshotDamaged]:
    "needs a damaged snapshot file: spec/reliability/fsRecovery.test.ts checks it on the sink",
  [WARNING_CODES.taintScanIncomplete]:
    "needs a tool result past the taint scan's budget: spec/reliability/seeds.test.ts checks it on the sink",
  [WARNING_CODES.journalPermissions]: "fsStores' own onWarn: reported before any app exists",
  [WARNING_CODES.onWarnThrew]: "the process warning channel's, when a listener throws (spec/effects/bus.test.ts)",
  [WARNING_CODES.warning]: "the process warning channel's default code",
};

const waitsForEvent = setup({}).createMachine({
  id: "waits",
  initial: "idle",
  states: { idle: { on: { GO: "done" } }, done: { type: "final" } },
});

describe("the one warning path", () => {
  it("accounts for every code in WARNING_CODES", () => {
    const codes = new Set(Object.values(WARNING_CODES));
    const accounted = new Set([...Object.keys(PROVOKED), ...Object.keys(NOT_HERE)]);
    expect([...codes].filter((code) => !accounted.has(code))).toEqual([]);
    expect([...accounted].filter((code) => !codes.has(code as never))).toEqual([]);
  });

  it.each(Object.keys(PROVOKED).map((code) => ({ code })))(
    "$code reaches observability.onWarn and the bus exactly once",
    async ({ code }) => {
      const { heard, onBus } = await PROVOKED[code]!();
      expect(heard.filter((w) => w.code === code)).toHaveLength(1);
      expect(onBus.filter((w) => w.code === code)).toHaveLength(1);
      expect(onBus.find((w) => w.code === code)).toBe(heard.find((w) => w.code === code));
    },
  );

  it("has one emitter of the bus's warn event: the sink (actors/warnings.ts)", () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) files.push(path);
      }
    };
    for (const folder of ["actors", "adapters", "stores", "cli"]) walk(join(ROOT, folder));
    const emitters = files
      .filter((path) => /emit\(\s*["']warn["']/.test(readFileSync(path, "utf8")))
      .map((path) => relative(ROOT, path).split("\\").join("/"));
    expect(emitters).toEqual(["actors/warnings.ts"]);
  });
});
