// A promise actor's rejection reaches the machine as XState delivers it (issue 33, ADR 0012 D7): a plain object keeps
// its JSON fields, an Error its name, message and own enumerable JSON fields; journaled, so a replay delivers the same.
import { describe, expect, it } from "vitest";
import { assign, createActor, fromPromise, setup, toPromise } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { createTaskEffect } from "../actors/effects/effect.js";
import { memoryStores } from "../stores/memory.js";

class RateLimited extends Error {
  code = "RATE_LIMITED";
  retryAfter = 30;
  details = { scope: "org", limits: [1, 2] };
  constructor() {
    super("slow down");
    this.name = "RateLimited";
  }
}

function failing(reason: () => unknown) {
  return setup({
    actors: { call: fromPromise<unknown>(() => Promise.reject(reason())) },
  }).createMachine({
    id: "failing",
    context: { error: null as unknown },
    initial: "calling",
    output: ({ context }) => context.error,
    states: {
      calling: {
        invoke: { src: "call", onError: { target: "failed", actions: assign({ error: ({ event }) => event.error }) } },
      },
      failed: { type: "final" },
    },
  });
}

async function onBoth(reason: () => unknown) {
  const machine = failing(reason);
  const x = await toPromise(createActor(machine).start());
  const stores = memoryStores();
  const effects = { call: createTaskEffect(() => Promise.reject(reason())) };
  const app = createApp(defineConfig({ stores, effects }));
  await app.start(machine, { executionId: "f" });
  const live = await app.result("f");
  await app.close();
  const app2 = createApp(defineConfig({ stores, effects, logics: [machine] }));
  const replayed = (await app2.resume("f")).getSnapshot().output;
  await app2.close();
  return { x, live, replayed };
}

describe("a promise actor's rejection", () => {
  it("a plain object keeps its JSON fields, as XState delivers it", async () => {
    const { x, live, replayed } = await onBoth(() => ({ code: 42, detail: "x", nested: { ok: false } }));
    expect(x).toEqual({ code: 42, detail: "x", nested: { ok: false } });
    expect(live).toEqual(x);
    expect(replayed).toEqual(x);
  });

  it("an Error keeps its name, message and own enumerable JSON fields", async () => {
    const { x, live, replayed } = await onBoth(() => new RateLimited());
    const facts = (e: any) => ({
      name: e.name,
      message: e.message,
      code: e.code,
      retryAfter: e.retryAfter,
      details: e.details,
    });
    expect(facts(live)).toEqual(facts(x));
    expect(replayed).toEqual(live);
  });
});
