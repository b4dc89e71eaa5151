// Child executions on every adapter (ADR 0012): a parent invoking a worker machine, with messages both ways, runs to
// the same output; a tree left mid-child by a closed app is resumed by a fresh app over the reopened stores without
// running the child's recorded step again.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { EXECUTION_STARTED } from "../../stores/schema.js";
import { parent } from "../children/machines.js";
import { until } from "../support/harness.js";
import { withStores, type AdapterHarness } from "../support/adapterHarness.js";

const expected = { seen: ["progress", "pong"], result: { doubled: 42 } };

export function describeChildrenSuite(name: string, harness: AdapterHarness): void {
  describe(`child executions on ${name}`, () => {
    it(
      "run a tree with messages both ways to the same output, each log contiguous, the child linked to its parent",
      withStores(harness, async ({ stores }) => {
        const app = createApp(
          defineConfig({ stores, effects: { double: createToolEffect(async (n: number) => n * 2) } }),
        );
        await app.start(parent, { executionId: "p1" });
        expect(await app.result("p1")).toEqual(expected);
        for (const id of ["p1", "p1/w"]) {
          const log = await app.log(id);
          expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
          expect(log.at(-1)).toMatchObject({ status: "done" });
        }
        expect((await app.log("p1/w"))[0]).toMatchObject({ type: EXECUTION_STARTED, parent: { executionId: "p1" } });
        // The catalogue links the child to its parent and root; app.executions({ root }) lists the tree, root first.
        await app.start(parent, { executionId: "other" });
        await app.result("other");
        const tree = await app.executions({ root: "p1" });
        expect(tree.map((info) => [info.executionId, info.parentId, info.rootId])).toEqual([
          ["p1", undefined, undefined],
          ["p1/w", "p1", "p1"],
        ]);
        expect((await app.executions({ root: "p1/w" })).map((info) => info.executionId)).toEqual(["p1/w"]);
        expect((await app.executions()).map((info) => info.executionId).sort()).toEqual([
          "other",
          "other/w",
          "p1",
          "p1/w",
        ]);
        await app.close();
      }),
    );

    it(
      "resume a tree a closed app left mid-child, in a fresh app over the reopened stores",
      withStores(harness, async (opened) => {
        const runs: string[] = [];
        let block = true;
        const effects = {
          double: createToolEffect(async (n: number, ctx) => {
            runs.push(ctx.stepId);
            if (block) await new Promise(() => undefined);
            return n * 2;
          }),
        };
        const first = createApp(defineConfig({ stores: opened.stores, effects }));
        await first.start(parent, { executionId: "p2" });
        await until(() => runs.length === 1);
        await first.close();
        block = false;
        const stores = await opened.reopen();
        const second = createApp(defineConfig({ stores, effects, logics: [parent] }));
        expect((await second.resumeUnfinished()).failed).toEqual([]);
        expect(await second.result("p2")).toEqual(expected);
        expect(runs).toHaveLength(2); // the in-flight call again (it had no outcome), nothing recorded
        await second.close();
      }),
    );
  });
}
