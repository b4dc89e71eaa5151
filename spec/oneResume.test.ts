// One resume per execution at a time in an app: a second app.resume, an app.result that resumes, or a
// resume while a start of the same id is under way joins the one in flight (the same actor); the
// execution is rebuilt once and its in-flight step runs once, on memory, the filesystem and IndexedDB
// (fake-indexeddb, installed before idb loads: idb checks instanceof against its globals).
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { afterAll, describe, expect, it } from "vitest";
import { appInternals, createApp, type App } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import type { JournaledActor } from "../actors/journal/actor.js";
import { fsStores, serveControl } from "../adapters/fs/index.js";
import { indexedDbStores, type IndexedDbStores } from "../adapters/indexeddb/index.js";
import { connectControl } from "../cli/control.js";
import { ConcurrencyError } from "../stores/errors.js";
import { memoryStores } from "../stores/memory.js";
import { STEP_COMPLETED } from "../stores/schema.js";
import type { Stores } from "../stores/types.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects, until } from "./support/harness.js";
import { tempDirs } from "./support/tempDirs.js";

const { tempDir, removeTempDirs } = tempDirs("one-resume");
afterAll(removeTempDirs);

/** Stores that can be opened again after the app over them closed (as a restarted process does). */
interface Reopenable {
  open(): Promise<Stores>;
  close(stores: Stores): Promise<void>;
}

const kinds: [string, () => Promise<Reopenable>][] = [
  [
    "memory",
    async () => {
      const stores = memoryStores();
      return { open: async () => stores, close: async () => undefined };
    },
  ],
  [
    "fs",
    async () => {
      const dir = await tempDir("stores");
      return {
        open: () => fsStores({ dir }),
        close: (stores) => (stores as Awaited<ReturnType<typeof fsStores>>).close(),
      };
    },
  ],
  [
    "indexeddb",
    async () => {
      const indexedDB = new IDBFactory();
      return {
        open: () => indexedDbStores({ name: "one-resume", indexedDB, IDBKeyRange }),
        close: (stores) => (stores as IndexedDbStores).close(),
      };
    },
  ],
];

type Caller = "resume" | "result";

/** Execution "r" left with its first step ("research") started and no outcome: the process died while it ran. */
async function interruptedRun(where: Reopenable): Promise<() => void> {
  let release!: () => void;
  const blocked = new Promise<string>((resolve) => (release = () => resolve("late")));
  const stores = await where.open();
  const app = createApp(
    defineConfig({
      stores,
      effects: { research: createToolEffect(() => blocked), write: countedDemoEffects().effects.write },
    }),
  );
  await app.start(demoMachine, { executionId: "r", input: { topic: "owls" } });
  await app.close();
  await where.close(stores);
  return release;
}

/** Drives a resumed demo execution to its end (approve when it waits) and returns its output. */
async function finish(app: App, actor: JournaledActor): Promise<unknown> {
  await until(() => actor.getSnapshot().value === "waiting" || actor.getSnapshot().status !== "active", 30_000);
  if (actor.getSnapshot().status === "active") await actor.sendAsync({ type: "APPROVE" });
  return app.result("r");
}

describe.each(kinds)("one resume per execution at a time (%s)", (_kind, make) => {
  it.each<[Caller, Caller]>([
    ["resume", "resume"],
    ["resume", "result"],
    ["result", "result"],
  ])(
    "app.%s and app.%s at once rebuild the execution once and run its in-flight step once",
    async (first, second) => {
      const where = await make();
      const release = await interruptedRun(where);
      const stores = await where.open();
      const counted = countedDemoEffects();
      const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [demoMachine] }));
      try {
        const call = (caller: Caller) => (caller === "resume" ? app.resume("r") : app.result("r"));
        const calls = [call(first), call(second)].map((p) =>
          p.then(
            (value) => ({ ok: true as const, value }),
            (error: unknown) => ({ ok: false as const, error }),
          ),
        );
        // A third caller, once the app holds the execution (issued at once, it could come first): it joins, and drives the run to its end.
        await until(() => appInternals(app).execution("r") !== undefined, 30_000);
        const actor = await app.resume("r");
        const output = await finish(app, actor);
        const settled = await Promise.all(calls);
        expect(settled.filter((s) => !s.ok)).toEqual([]);
        for (const [i, caller] of [first, second].entries()) {
          const value = (settled[i] as { value: unknown }).value;
          if (caller === "resume") expect(value, "a joined resume gets the same actor").toBe(actor);
          else expect(value).toEqual(output);
        }
        expect(output).toEqual({ notes: ["notes on owls", "draft(notes on owls)"], approved: true });
        expect(Object.fromEntries(counted.runs)).toEqual({ "demo#research:1": 1, "demo#write:1": 1 });
        const log = await app.log("r");
        expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
        expect(log.filter((r) => r.type === STEP_COMPLETED)).toHaveLength(2);
      } finally {
        release();
        await app.close();
        await where.close(stores);
      }
    },
    60_000,
  );

  it("app.resume while app.start of the same id is under way joins the start: one execution, its steps run once", async () => {
    const where = await make();
    const stores = await where.open();
    const counted = countedDemoEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [demoMachine] }));
    const errors: unknown[] = [];
    const onError = (error: unknown) => {
      errors.push(error);
      return undefined;
    };
    try {
      const starting = app.start(demoMachine, { executionId: "r", input: { topic: "owls" } });
      const resuming = app.resume("r");
      const results = [app.result("r").catch(onError), starting.catch(onError), resuming.catch(onError)];
      const [started, resumed] = await Promise.all([starting, resuming]);
      expect(resumed, "the resume gets the actor the start made").toBe(started);
      const output = await finish(app, started);
      expect(await results[0]).toEqual(output);
      expect(errors).toEqual([]);
      expect(Object.fromEntries(counted.runs)).toEqual({ "demo#research:1": 1, "demo#write:1": 1 });
      const log = await app.log("r");
      expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    } finally {
      await app.close();
      await where.close(stores);
    }
  }, 60_000);

  it("two app.start of one id at once: one runs it, the other is refused with DuplicateExecutionError (never a ConcurrencyError)", async () => {
    const where = await make();
    const stores = await where.open();
    const counted = countedDemoEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects }));
    try {
      const settled = await Promise.allSettled([
        app.start(demoMachine, { executionId: "r", input: { topic: "owls" } }),
        app.start(demoMachine, { executionId: "r", input: { topic: "owls" } }),
      ]);
      expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
      const refused = settled.find((s): s is PromiseRejectedResult => s.status === "rejected")!;
      expect(refused.reason).not.toBeInstanceOf(ConcurrencyError);
      expect(refused.reason).toMatchObject({ code: "LOOM_DUPLICATE_EXECUTION", executionId: "r" });
      const actor = (settled.find((s) => s.status === "fulfilled") as PromiseFulfilledResult<JournaledActor>).value;
      await finish(app, actor);
      expect(Object.fromEntries(counted.runs)).toEqual({ "demo#research:1": 1, "demo#write:1": 1 });
    } finally {
      await app.close();
      await where.close(stores);
    }
  }, 60_000);
});

describe("one resume per execution through the control socket", () => {
  it("two CLI commands at once (loomwork resume) resume the execution once: its in-flight step runs once", async () => {
    const dir = await tempDir("control");
    const where: Reopenable = {
      open: () => fsStores({ dir }),
      close: (stores) => (stores as Awaited<ReturnType<typeof fsStores>>).close(),
    };
    const release = await interruptedRun(where);
    const stores = await where.open();
    const counted = countedDemoEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [demoMachine] }));
    const control = await serveControl(app, { dir });
    const clients = await Promise.all([connectControl(dir), connectControl(dir)]);
    try {
      const replies = await Promise.all(clients.map((client) => client!.request({ op: "resume", executionId: "r" })));
      expect(replies.map((reply) => reply.status)).toEqual(["active", "active"]);
      const output = await finish(app, await app.resume("r"));
      expect(output).toEqual({ notes: ["notes on owls", "draft(notes on owls)"], approved: true });
      expect(Object.fromEntries(counted.runs)).toEqual({ "demo#research:1": 1, "demo#write:1": 1 });
      const log = await app.log("r");
      expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    } finally {
      for (const client of clients) client?.close();
      release();
      await control.close();
      await app.close();
      await where.close(stores);
    }
  }, 60_000);
});
