// Child executions (issue 33, ADR 0012): a machine that invokes or spawns another machine runs it as a child
// execution, with its own journal and a derived id; its output reaches the parent as a journaled outcome, messages
// between them (sendTo, sendParent) are journaled write-ahead in the receiver, and leaving the invoking state stops it.
import { describe, expect, it } from "vitest";
import {
  type AnyStateMachine,
  assign,
  createActor,
  createMachine,
  fromCallback,
  fromPromise,
  sendParent,
  sendTo,
  setup,
} from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { UnknownEffectError } from "../../actors/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import { fanOut, parent } from "./machines.js";

function countingEffects() {
  const runs: string[] = [];
  return {
    runs,
    effects: {
      double: createToolEffect(async (n: number, ctx) => {
        runs.push(ctx.stepId);
        return n * 2;
      }),
    },
  };
}

async function onXState(machine: AnyStateMachine): Promise<unknown> {
  const actor = createActor(machine).start();
  await new Promise<void>((resolve) => actor.subscribe({ complete: () => resolve() }));
  return actor.getSnapshot().output;
}

describe("child executions", () => {
  it("run a child machine as an execution of its own, with messages both ways, as on XState", async () => {
    const expected = await onXState(parent);
    expect(expected).toEqual({ seen: ["progress", "pong"], result: { doubled: 42 } });

    const stores = memoryStores();
    const { effects, runs } = countingEffects();
    const app = createApp(defineConfig({ stores, effects }));
    await app.start(parent, { executionId: "p1" });
    expect(await app.result("p1")).toEqual(expected);
    expect(runs).toEqual(["worker#0.worker.doubling:1"]);

    const child = await app.log("p1/w");
    expect(child[0]).toMatchObject({
      type: EXECUTION_STARTED,
      logicId: "worker",
      input: { n: 21 },
      parent: { executionId: "p1", childId: "w" },
      root: "p1",
    });
    expect(child.at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "done", output: { doubled: 42 } });
    // The parent's message arrived journaled, write-ahead, naming its sender and its id.
    const ping = child.find((r) => r.type === EVENT_RECEIVED);
    expect(ping).toMatchObject({ event: { type: "PING" }, from: { executionId: "p1" } });
    // The child's output reached the parent as a journaled outcome of its step.
    const log = await app.log("p1");
    expect(log.find((r) => r.type === STEP_COMPLETED)).toMatchObject({
      effectId: "loom.child",
      output: { doubled: 42 },
    });
    expect(
      log.filter((r) => r.type === EVENT_RECEIVED).map((r) => (r.type === EVENT_RECEIVED ? r.event.type : "")),
    ).toEqual(["PROGRESS", "PONG"]);
    await app.close();

    // A fresh app resumes the ended tree from the logs: the same output, nothing run.
    const again = createApp(defineConfig({ stores, effects }));
    expect(await again.result("p1")).toEqual(expected);
    expect(runs).toHaveLength(1);
    await again.close();
  });

  it("stops the child, journaled in its log, when the parent leaves the invoking state", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: { double: createToolEffect(async (n: number) => (await gate, n * 2)) },
      }),
    );
    const actor = await app.start(parent, { executionId: "p2" });
    await until(async () => (await stores.events.head("p2/w")) > 0);
    await actor.sendAsync({ type: "CANCEL" });
    expect(await app.result("p2")).toEqual({ seen: [] });
    await until(async () => (await app.log("p2/w")).at(-1)?.type === EXECUTION_ENDED);
    expect((await app.log("p2/w")).at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "stopped" });
    release();
    await app.close();
  });

  it("stops the whole tree with app.stop(root)", async () => {
    const stores = memoryStores();
    const app = createApp(
      defineConfig({ stores, effects: { double: createToolEffect(() => new Promise<number>(() => undefined)) } }),
    );
    await app.start(parent, { executionId: "p3" });
    await until(async () => (await stores.events.head("p3/w")) > 0);
    await app.stop("p3");
    await until(async () => (await app.log("p3/w")).at(-1)?.type === EXECUTION_ENDED);
    expect((await app.log("p3/w")).at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "stopped" });
    await app.close();
  });

  it("resumes a tree left mid-child by a closed app: the child's recorded step is not run again", async () => {
    const stores = memoryStores();
    let block = true;
    const runs: string[] = [];
    const effects = {
      double: createToolEffect(async (n: number, ctx) => {
        runs.push(ctx.stepId);
        if (block) await new Promise(() => undefined);
        return n * 2;
      }),
    };
    const first = createApp(defineConfig({ stores, effects }));
    await first.start(parent, { executionId: "p4" });
    await until(() => runs.length === 1);
    await first.close();
    block = false;
    const second = createApp(defineConfig({ stores, effects, logics: [parent] }));
    const report = await second.resumeUnfinished();
    expect(report.failed).toEqual([]);
    expect(await second.result("p4")).toEqual({ seen: ["progress", "pong"], result: { doubled: 42 } });
    expect(runs).toEqual(["worker#0.worker.doubling:1", "worker#0.worker.doubling:1"]);
    await second.close();
  });

  it("refuses at start a source that is neither an effect nor a machine, naming every missing one", async () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: { a: { invoke: [{ src: "nope" }, { src: "neither" }] } },
    });
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    const refused = app.start(machine, { executionId: "x" });
    await expect(refused).rejects.toThrow(UnknownEffectError);
    await expect(refused).rejects.toThrow(/"nope".*"neither"/);
  });
});

async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > 10_000) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe("spawn() inside assign", () => {
  it("starts the spawned machine as a child execution, and its effects as steps, as on XState", async () => {
    const counter = setup({}).createMachine({
      id: "counter",
      context: { n: 0 },
      on: { INC: { actions: [assign({ n: ({ context }) => context.n + 1 }), sendParent({ type: "COUNTED" })] } },
    });
    const holder = setup({
      types: { context: {} as { ref?: unknown; seen: number; doubled?: number } },
      actors: { counter, double: fromPromise(async ({ input }: { input: number }) => input * 2) },
    }).createMachine({
      id: "holder",
      context: { seen: 0 },
      initial: "on",
      entry: assign({ ref: ({ spawn }) => spawn("counter", { id: "c" }) }),
      states: {
        on: {
          on: {
            POKE: { actions: sendTo("c", { type: "INC" }) },
            COUNTED: { actions: assign({ seen: ({ context }) => context.seen + 1 }) },
            DOUBLE: { actions: assign({ ref: ({ spawn }) => spawn("double", { id: "d", input: 21 }) }) },
            "xstate.done.actor.d": { actions: assign({ doubled: ({ event }) => event.output as number }) },
          },
        },
      },
    });
    const app = createApp(defineConfig({ stores: memoryStores(), effects: countingEffects().effects }));
    const actor = await app.start(holder, { executionId: "h" });
    await actor.sendAsync({ type: "POKE" });
    await actor.sendAsync({ type: "DOUBLE" });
    await until(() => actor.getSnapshot().context.seen === 1 && actor.getSnapshot().context.doubled === 42);
    expect((await app.log("h/c"))[0]).toMatchObject({ type: EXECUTION_STARTED, parent: { executionId: "h" } });
    await app.close();
  });
});

describe("trees", () => {
  it("spawns 100 children in one macrostep and joins them, three deep", async () => {
    const leaf = setup({}).createMachine({
      id: "leaf",
      initial: "a",
      states: { a: { always: "b" }, b: { type: "final" } },
      output: () => 1,
    });
    const mid = setup({ actors: { leaf } }).createMachine({
      id: "mid",
      initial: "run",
      states: { run: { invoke: { id: "l", src: "leaf", onDone: "done" } }, done: { type: "final" } },
      output: () => 1,
    });
    const top = fanOut("top", 100, mid, "m");
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: {} }));
    await app.start(top, { executionId: "top" });
    expect(await app.result("top")).toBe(100);
    const all = await stores.events.listExecutions();
    expect(all).toHaveLength(1 + 100 + 100);
    expect((await app.log("top/m42/l"))[0]).toMatchObject({ parent: { executionId: "top/m42" }, root: "top" });
    await app.close();
  });
});

describe("callback actors", () => {
  const pinger = (starts: { n: number }) =>
    setup({
      types: { context: {} as { pongs: number } },
      actors: {
        echo: fromCallback(({ sendBack, receive }) => {
          starts.n++;
          receive((event) => {
            if (event.type === "PING") sendBack({ type: "PONG" });
          });
        }),
      },
    }).createMachine({
      id: "pinger",
      context: { pongs: 0 },
      initial: "on",
      states: {
        on: {
          invoke: { id: "echo", src: "echo" },
          on: {
            PING: { actions: sendTo("echo", { type: "PING" }) },
            PONG: { actions: assign({ pongs: ({ context }) => context.pongs + 1 }) },
            OFF: "off",
          },
        },
        off: {},
      },
    });

  it("run live: what they send back is journaled as the parent's event; a resume starts them again", async () => {
    const starts = { n: 0 };
    const machine = pinger(starts);
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: {} }));
    const actor = await app.start(machine, { executionId: "cb" });
    await actor.sendAsync({ type: "PING" });
    await until(() => actor.getSnapshot().context.pongs === 1);
    const pong = (await app.log("cb")).find((r) => r.type === EVENT_RECEIVED && r.event.type === "PONG");
    expect(pong).toMatchObject({ from: { source: "echo" } });
    await app.close();

    const again = createApp(defineConfig({ stores, effects: {} }));
    const resumed = await again.resume("cb", machine);
    expect(starts.n).toBe(2);
    await resumed.sendAsync({ type: "PING" });
    await until(() => resumed.getSnapshot().context.pongs === 2);
    // Leaving the state stops it: a PING after that reaches nothing.
    await resumed.sendAsync({ type: "OFF" });
    await again.close();
  });
});

describe("systemId", () => {
  it("system.get finds a running child by its systemId in a later macrostep, after a resume from a snapshot too", async () => {
    const echo = setup({}).createMachine({
      id: "echo",
      on: { PING: { actions: sendParent({ type: "PONG" }) } },
    });
    const caller = setup({ actors: { echo }, types: { context: {} as { pongs: number } } }).createMachine({
      id: "caller",
      context: { pongs: 0 },
      invoke: { id: "e", src: "echo", systemId: "echoer" },
      on: {
        CALL: { actions: sendTo(({ system }) => system.get("echoer"), { type: "PING" }) },
        PONG: { actions: assign({ pongs: ({ context }) => context.pongs + 1 }) },
      },
    });
    const stores = memoryStores();
    const config = { stores, effects: {}, execution: { snapshotEvery: 1 as const } };
    const app = createApp(defineConfig(config));
    const actor = await app.start(caller, { executionId: "s" });
    await actor.sendAsync({ type: "CALL" });
    await until(() => actor.getSnapshot().context.pongs === 1);
    await app.close();
    expect((await stores.events.getSnapshot("s"))?.seq).toBeGreaterThan(1);
    const again = createApp(defineConfig(config));
    const resumed = await again.resume("s", caller);
    expect(resumed.replay.fromSnapshotSeq).toBeGreaterThan(1);
    await resumed.sendAsync({ type: "CALL" });
    await until(() => resumed.getSnapshot().context.pongs === 2);
    await again.close();
  });
});

describe("limits (execution.children)", () => {
  // A machine invoking itself: each level's child is the same machine.
  const selfInvoking = createMachine({
    id: "nested",
    initial: "go",
    states: {
      go: { invoke: { id: "n", src: "nested", onDone: "done", onError: "failed" } },
      done: { type: "final" },
      failed: { type: "final" },
    },
  });
  (selfInvoking.implementations.actors as Record<string, unknown>).nested = selfInvoking;

  it("refuses a child deeper than maxDepth: its parent's step fails with ChildLimitError, nothing started", async () => {
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: {}, execution: { children: { maxDepth: 3 } } }));
    await app.start(selfInvoking, { executionId: "d" });
    await until(async () => (await stores.events.listExecutions()).every((e) => e.status !== "running"));
    const ids = (await stores.events.listExecutions()).map((e) => e.executionId).sort();
    expect(ids).toEqual(["d", "d/n", "d/n/n", "d/n/n/n"]);
    const deepest = await app.log("d/n/n/n");
    const failed = deepest.find((r) => r.type === "loom.step.failed");
    expect(failed).toMatchObject({ error: { name: "ChildLimitError", code: "LOOM_CHILD_LIMIT" } });
    await app.close();
  });

  it("ends in error a macrostep starting more child machines than maxFanOut", async () => {
    const leaf = setup({}).createMachine({ id: "leaf" });
    const wide = setup({ actors: { leaf } }).createMachine({
      id: "wide",
      invoke: [1, 2, 3].map((i) => ({ id: `l${i}`, src: "leaf" as const })),
    });
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: {}, execution: { children: { maxFanOut: 2 } } }));
    await app.start(wide, { executionId: "w" });
    await expect(app.result("w")).rejects.toThrow(
      /3 child machines in one macrostep, past execution.children.maxFanOut \(2\)/,
    );
    expect((await stores.events.listExecutions()).map((e) => e.executionId)).toEqual(["w"]);
    await app.close();
  });

  it("refuses a bad limit at createApp, naming it", () => {
    expect(() =>
      createApp(defineConfig({ stores: memoryStores(), effects: {}, execution: { children: { maxDepth: 0 } } })),
    ).toThrow(/execution.children.maxDepth/);
  });
});

describe("a subject's tree", () => {
  it("is exported and erased whole: a child inherits its parent's subject", async () => {
    const { eraseSubject, exportSubject } = await import("../../lifecycle.js");
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: countingEffects().effects,
        security: { crypto: { keys: stores.keys } },
        compliance: { erase: true },
      }),
    );
    await app.start(parent, { executionId: "s1", subject: "ada" });
    await app.result("s1");
    expect((await stores.events.getExecution("s1/w"))?.subject).toBe("ada");
    const exported = await exportSubject(app, "ada");
    expect(exported.executions.map((e) => e.executionId).sort()).toEqual(["s1", "s1/w"]);
    await eraseSubject(app, "ada");
    await expect(app.log("s1/w")).rejects.toThrow(/erased/i);
    await app.close();
  });
});

describe("the inspector", () => {
  it("is told of a child execution once, as the child of its parent, in its root's system", async () => {
    const events: {
      type: string;
      rootId?: string;
      actorRef: { sessionId: string; _parent?: { sessionId: string } };
    }[] = [];
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: countingEffects().effects,
        observability: { inspect: (e) => void events.push(e as never) },
      }),
    );
    await app.start(parent, { executionId: "i1" });
    await app.result("i1");
    const actors = events.filter((e) => e.type === "@xstate.actor");
    expect(actors.map((e) => e.actorRef.sessionId)).toEqual(["loom:i1", "loom:i1/w", "loom:i1/w/0.worker.doubling"]);
    expect(actors[1]!.actorRef._parent?.sessionId).toBe("loom:i1");
    expect(new Set(events.map((e) => e.rootId))).toEqual(new Set(["loom:i1"]));
    await app.close();
  });
});

describe("onSnapshot", () => {
  it("delivers each active snapshot of a child execution to its parent, journaled as xstate.snapshot.<id>", async () => {
    const stepper = setup({}).createMachine({
      id: "stepper",
      initial: "a",
      states: { a: { on: { NEXT: "b" } }, b: { on: { NEXT: "c" } }, c: {} },
    });
    const watcher = setup({ actors: { stepper }, types: { context: {} as { seen: string[] } } }).createMachine({
      id: "watcher",
      context: { seen: [] },
      invoke: {
        id: "s",
        src: "stepper",
        onSnapshot: {
          actions: assign({ seen: ({ context, event }) => [...context.seen, String(event.snapshot.value)] }),
        },
      },
      on: { POKE: { actions: sendTo("s", { type: "NEXT" }) } },
    });
    const x = createActor(watcher).start();
    x.send({ type: "POKE" });
    x.send({ type: "POKE" });
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    const actor = await app.start(watcher, { executionId: "ws" });
    await actor.settled();
    await actor.sendAsync({ type: "POKE" });
    await actor.settled();
    await actor.sendAsync({ type: "POKE" });
    await until(() => actor.getSnapshot().context.seen.length === 3);
    expect(actor.getSnapshot().context.seen).toEqual(x.getSnapshot().context.seen);
    expect(actor.getSnapshot().context.seen).toEqual(["a", "b", "c"]);
    await app.close();
  });
});
