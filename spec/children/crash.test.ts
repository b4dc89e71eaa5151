// A crash at every write of a tree (ADR 0012 D3): the process "dies" before its k-th append reaches the store, for
// every k, and a fresh app resumes the tree. Each run ends with the uninterrupted output, every log's seqs contiguous,
// no recorded step run again, and every message journaled exactly once by its receiver.
import { describe, expect, it } from "vitest";
import { assign, fromPromise, sendParent, sendTo, setup } from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_RECEIVED, STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { ForwardingEventStore, SimulatedCrash, withEvents } from "../support/harness.js";

const leaf = setup({
  types: { input: {} as { n: number; name: string } },
  actors: { square: fromPromise(async ({ input }: { input: number }) => input * input) },
}).createMachine({
  id: "leaf",
  context: ({ input }) => ({ n: input.n, name: input.name }),
  initial: "squaring",
  states: {
    squaring: {
      invoke: {
        id: "sq",
        src: "square",
        input: ({ context }) => context.n,
        onDone: {
          target: "told",
          actions: sendParent(({ context, event }) => ({ type: "SQUARED", value: event.output, name: context.name })),
        },
      },
    },
    told: { on: { THANKS: "done" } },
    done: { type: "final" },
  },
  output: ({ context }) => ({ n: context.n }),
});

const middle = setup({
  types: { context: {} as { squares: number[] } },
  actors: { leaf },
}).createMachine({
  id: "middle",
  context: { squares: [] },
  type: "parallel",
  states: {
    a: {
      initial: "run",
      states: {
        run: {
          invoke: { id: "a", src: "leaf", input: { n: 3, name: "a" }, onDone: "end" },
          on: {
            SQUARED: {
              actions: [
                assign({ squares: ({ context, event }) => [...context.squares, event.value as number] }),
                sendTo(({ event }) => event.name as string, { type: "THANKS" }),
              ],
            },
          },
        },
        end: { type: "final" },
      },
    },
    b: {
      initial: "run",
      states: {
        run: { invoke: { id: "b", src: "leaf", input: { n: 4, name: "b" }, onDone: "end" } },
        end: { type: "final" },
      },
    },
  },
  output: ({ context }) => ({ squares: [...context.squares].sort((x, y) => x - y) }),
});

/** Dies (every later append throws) once `budget` appends reached the store. */
class DyingAfterAppends extends ForwardingEventStore {
  constructor(
    inner: ForwardingEventStore["inner"],
    private budget: number,
  ) {
    super(inner);
  }
  override async append(id: string, expected: number, records: StoredRecord[]) {
    if (this.budget <= 0) throw new SimulatedCrash("crashed");
    this.budget--;
    return this.inner.append(id, expected, records);
  }
  override async putSnapshot() {}
}

function effects(runs: string[]) {
  return {
    square: createToolEffect(async (n: number, ctx) => {
      runs.push(`${ctx.executionId}:${ctx.stepId}`);
      return n * n;
    }),
  };
}

async function logsOf(stores: ReturnType<typeof memoryStores>) {
  const ids = (await stores.events.listExecutions()).map((info) => info.executionId).sort();
  return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await stores.events.read(id)] as const)));
}

describe("a tree crashed at every write", () => {
  it("resumes to the same output, contiguous logs, no recorded step re-run, every message once", async () => {
    const clean = memoryStores();
    const first = createApp(defineConfig({ stores: clean, effects: effects([]) }));
    await first.start(middle, { executionId: "t" });
    const expected = await first.result("t");
    expect(expected).toEqual({ squares: [9, 16] });
    await first.close();
    const total = Object.values(await logsOf(clean)).length;
    expect(total).toBe(3);
    let appends = 0;
    const counting = new (class extends ForwardingEventStore {
      override async append(id: string, expected: number, records: StoredRecord[]) {
        appends++;
        return this.inner.append(id, expected, records);
      }
    })(memoryStores().events);
    const countApp = createApp(defineConfig({ stores: withEvents(memoryStores(), counting), effects: effects([]) }));
    await countApp.start(middle, { executionId: "t" });
    await countApp.result("t");
    await countApp.close();
    expect(appends).toBeGreaterThan(10);
    let resumedFromCrash = 0;

    for (let budget = 1; budget < appends; budget++) {
      const stores = memoryStores();
      const runs: string[] = [];
      const dying = createApp(
        defineConfig({
          stores: withEvents(stores, new DyingAfterAppends(stores.events, budget)),
          effects: effects(runs),
          observability: { onWarn: () => undefined },
        }),
      );
      await dying.start(middle, { executionId: "t" }).catch(() => undefined);
      // Let the dying app run until it cannot write any more, then "kill" it.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await dying.close();
      const durable = await logsOf(stores);
      const completed = new Set(
        Object.entries(durable).flatMap(([id, log]) =>
          log.filter((r) => r.type === STEP_COMPLETED && r.effectId === "square").map((r) => `${id}:${r.stepId}`),
        ),
      );
      runs.length = 0;

      const app = createApp(defineConfig({ stores, effects: effects(runs), logics: [middle] }));
      if ((await stores.events.head("t")) === 0) await app.start(middle, { executionId: "t" });
      else {
        resumedFromCrash++;
        const report = await app.resumeUnfinished();
        expect(report.failed, `budget ${budget}`).toEqual([]);
      }
      expect(await app.result("t"), `budget ${budget}`).toEqual(expected);
      await until(async () =>
        Object.values(await logsOf(stores)).every((log) => log.at(-1)?.type === "loom.execution.ended"),
      );
      await app.close();

      const logs = await logsOf(stores);
      expect(Object.keys(logs), `budget ${budget}`).toEqual(["t", "t/a", "t/b"]);
      for (const [id, log] of Object.entries(logs)) {
        expect(
          log.map((r) => r.seq),
          `${id} at budget ${budget}`,
        ).toEqual(log.map((_, i) => i + 1));
        expect(log.at(-1), `${id} at budget ${budget}`).toMatchObject({ status: "done" });
      }
      for (const run of runs) expect(completed.has(run), `${run} re-ran at budget ${budget}`).toBe(false);
      const received = (id: string) =>
        logs[id]!.filter((r) => r.type === EVENT_RECEIVED).map((r) => (r.event as { type: string }).type);
      expect(received("t").sort(), `budget ${budget}`).toEqual(["SQUARED", "SQUARED"]);
      expect(received("t/a"), `budget ${budget}`).toEqual(["THANKS"]);
      expect(received("t/b"), `budget ${budget}`).toEqual(["THANKS"]);
    }
    expect(resumedFromCrash).toBe(appends - 1);
  }, 60_000);
});

async function until(predicate: () => Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > 10_000) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
