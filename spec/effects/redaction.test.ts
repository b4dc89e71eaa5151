// security.redact: a secret an effect returns (or throws) appears in no record, no snapshot and no store.
import { describe, expect, it } from "vitest";
import { assign, setup } from "xstate";
import { appInternals, createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { redactionLayer, redactor } from "../../actors/effects/redaction.js";
import { createToolEffect, type EffectContext } from "../../actors/effects/effect.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_FAILED } from "../../stores/schema.js";
import type { StoredRecord, Stores } from "../../stores/types.js";
import { oneStep, recordsOf } from "./helpers.js";

const SECRET = "sk-proj0secret42";

/** Keeps what the tool returned in its context and outputs it: the secret would reach every snapshot and the end record. */
const keeper = setup({
  types: {} as { context: { kept: unknown[] } },
  actors: { fetchKey: effectActor() },
}).createMachine({
  id: "keeper",
  context: { kept: [] },
  initial: "first",
  states: {
    first: {
      invoke: {
        src: "fetchKey",
        id: "a",
        onDone: {
          target: "second",
          actions: assign({ kept: ({ context, event }) => [...context.kept, event.output] }),
        },
      },
    },
    second: {
      invoke: {
        src: "fetchKey",
        id: "b",
        onDone: { target: "done", actions: assign({ kept: ({ context, event }) => [...context.kept, event.output] }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.kept,
});

async function everythingStored(stores: Stores, executionId: string): Promise<string> {
  const parts: unknown[] = [
    await stores.events.read(executionId),
    await stores.events.getSnapshot(executionId),
    await stores.events.listExecutions(),
  ];
  for await (const info of stores.content.list())
    parts.push(new TextDecoder().decode(await stores.content.get(info.address)));
  return JSON.stringify(parts);
}

describe("secret redaction", () => {
  it("keeps a secret a tool returns out of every record, snapshot, catalogue entry, content blob and bus event", async () => {
    const stores = memoryStores();
    const seenInside: unknown[] = [];
    const appended: StoredRecord[] = [];
    const app = createApp(
      defineConfig({
        stores,
        effects: {
          fetchKey: createToolEffect(async () => ({
            [SECRET]: "as a key",
            value: SECRET,
            nested: [{ note: `the key is ${SECRET}, again ${SECRET}` }],
          })),
        },
        execution: {
          snapshotEvery: 2,
          effectMiddleware: [
            async (_ctx, input, next) => {
              const output = await next(input);
              seenInside.push(output);
              return output;
            },
          ],
        },
        security: { redact: [/sk-[a-z0-9]+/] },
      }),
    );
    app.on("append", ({ records }) => appended.push(...records));
    appInternals(app).effects.claimCheck = async (_ctx, input, next) => {
      const output = await next(input);
      await stores.content.put(new TextEncoder().encode(JSON.stringify(output)));
      return output;
    };
    await app.start(keeper, { executionId: "k" });
    const output = await app.result("k");
    expect(output).toEqual([
      { "[REDACTED]": "as a key", value: "[REDACTED]", nested: [{ note: "the key is [REDACTED], again [REDACTED]" }] },
      { "[REDACTED]": "as a key", value: "[REDACTED]", nested: [{ note: "the key is [REDACTED], again [REDACTED]" }] },
    ]);
    expect(JSON.stringify(seenInside)).toContain(SECRET);
    expect(await stores.events.getSnapshot("k")).toBeDefined();
    const stored = await everythingStored(stores, "k");
    expect(stored).toContain("[REDACTED]");
    expect(stored).not.toContain(SECRET);
    expect(JSON.stringify(appended)).not.toContain(SECRET);
  });

  it("scrubs an error's message and string facts before STEP_FAILED and EXECUTION_ENDED journal it", async () => {
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: {
          fetchKey: createToolEffect(async () => {
            throw Object.assign(new Error(`key ${SECRET} was rejected`), {
              code: "E_AUTH",
              header: `Bearer ${SECRET}`,
            });
          }),
        },
        security: { redact: [SECRET] },
      }),
    );
    await app.start(oneStep("fetchKey"), { executionId: "f" });
    await app.result("f").catch(() => undefined);
    const [failed] = await recordsOf(app, "f", STEP_FAILED);
    expect(failed).toMatchObject({
      stoppedAt: "effect",
      error: { name: "Error", code: "E_AUTH", message: "key [REDACTED] was rejected", header: "Bearer [REDACTED]" },
    });
    expect(JSON.stringify(await stores.events.read("f"))).not.toContain(SECRET);
  });

  it("takes patterns (strings, RegExps with or without the g flag) or a function", () => {
    expect(redactor(["tok-1", /sk-\d+/])("tok-1 sk-1 and sk-22, tok-1")).toBe(
      "[REDACTED] [REDACTED] and [REDACTED], [REDACTED]",
    );
    expect(redactor([/(sk)-(\d+)/g])("sk-1 sk-2")).toBe("[REDACTED] [REDACTED]");
    expect(redactor((text) => text.replace(/\d/g, "#"))("pin 1234")).toBe("pin ####");
  });

  it("walks results as JSON would (toJSON, class instances), and refuses what the journal refuses (a cycle, a Map)", async () => {
    class Secretive {
      token = SECRET;
    }
    const layer = redactionLayer([SECRET]);
    const ctx = {} as EffectContext;
    const cyclic: Record<string, unknown> = { token: SECRET };
    cyclic.self = cyclic;
    const out = (await layer(ctx, null, async () => ({
      at: { toJSON: () => `at ${SECRET}` },
      obj: new Secretive(),
      n: 1,
    }))) as Record<string, any>;
    expect(out.at).toBe("at [REDACTED]");
    expect(out.obj).toEqual({ token: "[REDACTED]" });
    expect(out.n).toBe(1);
    await expect(layer(ctx, null, async () => ({ cyclic }))).rejects.toMatchObject({
      code: "LOOM_NON_JSON_OUTPUT",
      message: expect.stringContaining("a cycle at output.cyclic.self"),
    });
    await expect(layer(ctx, null, async () => ({ m: new Map([[SECRET, 1]]) }))).rejects.toMatchObject({
      code: "LOOM_NON_JSON_OUTPUT",
      message: expect.stringContaining("a Map at output.m"),
    });
  });
});
