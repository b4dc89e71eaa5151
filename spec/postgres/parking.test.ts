// A parent that waits on its children holds no worker slot while it waits (ADR 0012 D9): a worker parks it (its
// lease given back, the fleet's row marked with the children it waits on) and the fleet claims it again when a child
// ends or a message reaches its inbox. So a tree deeper than the fleet's whole concurrency still ends.
import { assign, fromPromise, sendParent, setup } from "xstate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToolEffect } from "../../actors/effects/effect.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import { until } from "../support/harness.js";
import { kid, tree, treeOutput } from "./treeFleet.js";
import { startFleet } from "./workers.js";
import { startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

/** A leaf that doubles its input through the effect `double`, tells its parent, and ends with the result. */
const leaf = setup({
  types: { input: {} as { n: number }, context: {} as { n: number; doubled?: number } },
  actors: { double: fromPromise(async ({ input }: { input: number }) => input * 2) },
}).createMachine({
  id: "leaf",
  context: ({ input }) => ({ n: input.n }),
  initial: "doubling",
  states: {
    doubling: {
      invoke: {
        id: "double",
        src: "double",
        input: ({ context }) => context.n,
        onDone: {
          target: "done",
          actions: [
            assign({ doubled: ({ event }) => event.output as number }),
            sendParent(({ event }) => ({ type: "NOTE", from: "leaf", doubled: event.output })),
          ],
        },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => ({ doubled: context.doubled }),
});

/** A level of the tree: invokes `child` with its input plus one, hears its NOTEs, ends with the child's output. */
function level(id: string, child: typeof leaf) {
  return setup({
    types: { input: {} as { n: number }, context: {} as { n: number; notes: number; below?: unknown } },
    actors: { child },
  }).createMachine({
    id,
    context: ({ input }) => ({ n: input.n, notes: 0 }),
    initial: "waiting",
    states: {
      waiting: {
        invoke: {
          id: "below",
          src: "child",
          input: ({ context }) => ({ n: context.n + 1 }),
          onDone: { target: "done", actions: assign({ below: ({ event }) => event.output }) },
        },
        on: { NOTE: { actions: assign({ notes: ({ context }) => context.notes + 1 }) } },
      },
      done: { type: "final" },
    },
    output: ({ context }) => ({ level: id, notes: context.notes, below: context.below }),
  }) as unknown as typeof leaf;
}

const mid = level("mid", leaf);
const root = level("root", mid);

async function fleet(workers: number, concurrency: number) {
  const calls: string[] = [];
  const f = await startFleet(server, {
    name: "park",
    workers,
    concurrency,
    logics: [root, mid, leaf, tree, kid],
    effects: {
      double: createToolEffect(async (x: number, ctx) => (calls.push(ctx.executionId), x * 2)),
      prep: createToolEffect(async (x: number, ctx) => (calls.push(ctx.executionId), x + 1)),
      work: createToolEffect(async (x: number, ctx) => (calls.push(ctx.executionId), x * 10)),
    },
  });
  return { ...f, calls };
}

const contiguous = (log: { seq: number }[]) => log.map((r) => r.seq).join() === log.map((_, i) => i + 1).join();

describe("a parent waiting on children holds no worker slot (parking)", () => {
  it("a tree 3 deep ends on one worker with concurrency 1: each waiting parent is parked, then woken by its child's end", async () => {
    const f = await fleet(1, 1);
    try {
      await f.app.submit(root, { executionId: "t1", input: { n: 1 } });
      expect(await f.app.result("t1")).toEqual({
        level: "root",
        notes: 0,
        below: { level: "mid", notes: 1, below: { doubled: 6 } },
      });
      expect(f.calls).toEqual(["t1/below/below"]);
      for (const id of ["t1", "t1/below", "t1/below/below"]) {
        const log = await f.app.log(id);
        expect(contiguous(log), id).toBe(true);
        expect(
          log.filter((r) => r.type === EXECUTION_ENDED),
          id,
        ).toHaveLength(1);
      }
    } finally {
      await f.close();
    }
  }, 60_000);

  it("children waiting on their parent's message are parked too: two children that wait for an ACK end on one worker with concurrency 1", async () => {
    const f = await fleet(1, 1);
    try {
      await f.app.submit(tree, { executionId: "k1", input: { base: 0 } });
      expect(await f.app.result("k1")).toEqual(treeOutput(0));
      expect(f.calls.sort()).toEqual(["k1", "k1/a", "k1/b"]);
    } finally {
      await f.close();
    }
  }, 60_000);

  it("4 parents each waiting on a child end on one worker with concurrency 2; while a child runs, its parent is held by no worker", async () => {
    const f = await fleet(1, 2);
    try {
      const ids = ["p1", "p2", "p3", "p4"];
      for (const id of ids) await f.app.submit(mid, { executionId: id, input: { n: 10 } });
      const seenParked = new Set<string>();
      const results = Promise.all(ids.map((id) => f.app.result(id)));
      let done = false;
      void results.finally(() => (done = true));
      // Sampled while the fleet runs: a child running while its parent is not held by the worker.
      await until(() => {
        const holding = f.workers[0]!.holding();
        for (const id of ids) if (holding.includes(`${id}/below`) && !holding.includes(id)) seenParked.add(id);
        return done;
      }, 60_000);
      expect(await results).toEqual(ids.map(() => ({ level: "mid", notes: 1, below: { doubled: 22 } })));
      expect(seenParked.size).toBeGreaterThan(0);
      expect(f.calls.sort()).toEqual(ids.map((id) => `${id}/below`).sort());
    } finally {
      await f.close();
    }
  }, 90_000);
});
