// app.executions(query): the catalogue, by tree (read off the parent links a child's start record gives), subject and
// status; a bad query is refused naming its field, before anything is read.
import { describe, expect, it } from "vitest";
import { setup } from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ConfigError } from "../../actors/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { fanOut, parent } from "./machines.js";

describe("app.executions", () => {
  it("lists a tree three deep under any of its executions, with subject and status filters", async () => {
    const app = createApp(
      defineConfig({ stores: memoryStores(), effects: { double: createToolEffect(async (n: number) => n * 2) } }),
    );
    const leaf = setup({}).createMachine({
      id: "leaf",
      initial: "a",
      states: { a: { always: "b" }, b: { type: "final" } },
    });
    const mid = setup({ actors: { leaf } }).createMachine({
      id: "mid",
      initial: "run",
      states: { run: { invoke: { id: "l", src: "leaf", onDone: "done" } }, done: { type: "final" } },
    });
    await app.start(fanOut("top", 3, mid, "m"), { executionId: "f", subject: "ann" });
    await app.result("f");
    await app.start(parent, { executionId: "p" });
    await app.result("p");
    const tree = await app.executions({ root: "f" });
    expect(tree[0]).toMatchObject({ executionId: "f" });
    expect(tree).toHaveLength(1 + 3 + 3);
    for (const info of tree.slice(1)) {
      expect(info.rootId).toBe("f");
      expect(tree.some((other) => other.executionId === info.parentId)).toBe(true);
    }
    const deep = tree.find((info) => info.parentId !== undefined && info.parentId !== "f")!;
    expect(deep).toBeDefined();
    const under = await app.executions({ root: deep.parentId! });
    expect(under.map((info) => info.executionId)).toContain(deep.executionId);
    expect(under.every((info) => info.executionId.startsWith(deep.parentId!))).toBe(true);
    expect((await app.executions({ subject: "ann" })).map((info) => info.executionId)).toEqual(
      tree.map((info) => info.executionId),
    );
    expect(await app.executions({ root: "nobody" })).toEqual([]);
    expect((await app.executions({ status: "running" })).length).toBe(0);
    await app.close();
  });

  it("refuses a bad query with a ConfigError naming the field", async () => {
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    await expect(app.executions({ root: 5 } as never)).rejects.toMatchObject({
      name: "ConfigError",
      message: expect.stringMatching(/executions\.root/),
    });
    await expect(app.executions({ status: "finished" } as never)).rejects.toBeInstanceOf(ConfigError);
    await expect(app.executions({ parent: "x" } as never)).rejects.toThrow(/executions\.parent.*unknown option/);
    await expect(app.executions(null as never)).rejects.toBeInstanceOf(ConfigError);
    await app.close();
  });
});
