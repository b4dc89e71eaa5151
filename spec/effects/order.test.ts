// ADR 0140 D5: the order of the layers, observed from inside the chain and from the journal.
// kill switch -> claim-check -> redaction -> capability ring -> user middleware -> the effect.
import { describe, expect, it } from "vitest";
import { appInternals, createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect, type EffectMiddleware } from "../../actors/effects/effect.js";
import { memoryStores } from "../../stores/memory.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { demoMachine } from "../support/demoMachine.js";
import { oneStep, outcome, recordsOf } from "./helpers.js";

const SECRET = "sk-live0abc123";

function layeredApp(options: { failFirst?: boolean } = {}) {
  const stores = memoryStores();
  const order: string[] = [];
  const seen: Record<string, unknown[]> = {};
  const see = (who: string, value: unknown) => (seen[who] ??= []).push(structuredClone(value));
  const user =
    (name: string): EffectMiddleware =>
    async (ctx, input, next) => {
      order.push(`enter:${name}#${ctx.attempt}`);
      const output = await next(input);
      see(name, output);
      order.push(`exit:${name}`);
      return output;
    };
  let calls = 0;
  const search = createToolEffect(async (_input: unknown, ctx) => {
    calls++;
    order.push(`effect#${ctx.attempt}`);
    if (options.failFirst && calls === 1) throw new Error("flaky");
    return { text: `found with ${SECRET}`, token: SECRET };
  });
  const app = createApp(
    defineConfig({
      stores,
      effects: { search },
      execution: { effectMiddleware: [user("outer"), user("inner")] },
      security: { redact: [/sk-[a-z0-9]+/] },
      capabilities: { grants: { "one-search": ["search"] }, ...(options.failFirst ? { retry: { attempts: 2 } } : {}) },
    }),
  );
  appInternals(app).effects.claimCheck = async (ctx, input, next) => {
    order.push("enter:claimCheck");
    const output = await next(input);
    see("claimCheck", output);
    await stores.content.put(
      new TextEncoder().encode(JSON.stringify(output)),
      ctx.subject === undefined ? {} : { subject: ctx.subject },
    );
    order.push("exit:claimCheck");
    return output;
  };
  return { app, stores, order, seen };
}

async function blobs(stores: ReturnType<typeof memoryStores>): Promise<string[]> {
  const texts: string[] = [];
  for await (const info of stores.content.list())
    texts.push(new TextDecoder().decode(await stores.content.get(info.address)));
  return texts;
}

describe("the order of the layers (ADR 0140 D5)", () => {
  it("runs claim-check outside every user middleware, which wraps the effect in list order", async () => {
    const { app, order } = layeredApp();
    await app.start(oneStep("search"), { executionId: "e" });
    await app.result("e");
    expect(order).toEqual([
      "enter:claimCheck",
      "enter:outer#1",
      "enter:inner#1",
      "effect#1",
      "exit:inner",
      "exit:outer",
      "exit:claimCheck",
    ]);
  });

  it("gives user middleware the real result and the claim-check, the journal and the content store the redacted one", async () => {
    const { app, stores, seen } = layeredApp();
    await app.start(oneStep("search"), { executionId: "e" });
    await app.result("e");
    expect(seen.inner![0]).toEqual({ text: `found with ${SECRET}`, token: SECRET });
    expect(seen.outer![0]).toEqual({ text: `found with ${SECRET}`, token: SECRET });
    expect(seen.claimCheck![0]).toEqual({ text: "found with [REDACTED]", token: "[REDACTED]" });
    const [completed] = await recordsOf(app, "e", STEP_COMPLETED);
    expect(completed).toMatchObject({
      stepId: "one-search#search:1",
      effectId: "search",
      output: { text: "found with [REDACTED]", token: "[REDACTED]" },
    });
    expect(completed).not.toHaveProperty("stoppedAt");
    expect(completed).not.toHaveProperty("usage");
    const stored = await blobs(stores);
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toContain(SECRET);
    expect(JSON.stringify(await stores.events.read("e"))).not.toContain(SECRET);
  });

  it("puts the capability ring between redaction and the user middleware: a ring retry re-enters the middleware, not the claim-check", async () => {
    const { app, order } = layeredApp({ failFirst: true });
    await app.start(oneStep("search"), { executionId: "e" });
    await app.result("e");
    expect(order).toEqual([
      "enter:claimCheck",
      "enter:outer#1",
      "enter:inner#1",
      "effect#1",
      "enter:outer#2",
      "enter:inner#2",
      "effect#2",
      "exit:inner",
      "exit:outer",
      "exit:claimCheck",
    ]);
  });

  it("refuses a stopped step at the kill switch: no claim-check, no ring, no middleware, no effect", async () => {
    const { app, stores, order } = layeredApp();
    app.killSwitch.engage("incident 7");
    await app.start(oneStep("search"), { executionId: "e" });
    const ended = await outcome(app, "e");
    expect(ended.ok).toBe(false);
    expect(order).toEqual([]);
    const [failed] = await recordsOf(app, "e", STEP_FAILED);
    expect(failed).toMatchObject({
      stepId: "one-search#search:1",
      stoppedAt: "killSwitch",
      error: { name: "EffectStoppedError", code: "LOOM_EFFECT_STOPPED" },
    });
    expect((failed!.error as { message: string }).message).toContain("incident 7");
    expect(await blobs(stores)).toEqual([]);
    expect((await app.log("e")).at(-1)).toMatchObject({
      type: "loom.execution.ended",
      status: "error",
      error: { name: "EffectStoppedError" },
    });
  });
});

describe("replay serves every recorded step from the log", () => {
  it("runs no middleware, no claim-check, no ring and no effect for a recorded step; the next step runs the chain", async () => {
    const stores = memoryStores();
    const calls: string[] = [];
    const counting: EffectMiddleware = async (ctx, input, next) => {
      calls.push(`middleware:${ctx.stepId}`);
      return next(input);
    };
    const effects = {
      research: createToolEffect(async ({ topic }: { topic: string }, ctx) => {
        calls.push(`effect:${ctx.stepId}`);
        return `notes on ${topic}`;
      }),
      write: createToolEffect(async ({ notes }: { notes: string[] }, ctx) => {
        calls.push(`effect:${ctx.stepId}`);
        return notes.join("+");
      }),
    };
    const config = () =>
      defineConfig({
        stores,
        effects,
        logics: [demoMachine],
        execution: { effectMiddleware: [counting] },
        security: { redact: ["never-matches"] },
        capabilities: {
          grants: { demo: ["research", "write"] },
          quotas: { maxModelCalls: 1 },
          guardRequest: () => undefined,
          timeoutMs: 5_000,
        },
      });
    const claimChecked: string[] = [];
    const app1 = createApp(config());
    appInternals(app1).effects.claimCheck = async (ctx, input, next) => {
      claimChecked.push(ctx.stepId);
      return next(input);
    };
    const actor1 = await app1.start(demoMachine, { executionId: "r", input: { topic: "owls" } });
    await actor1.settled();
    await app1.close();
    expect(calls).toEqual(["middleware:demo#research:1", "effect:demo#research:1"]);

    calls.length = 0;
    claimChecked.length = 0;
    const app2 = createApp(config());
    appInternals(app2).effects.claimCheck = async (ctx, input, next) => {
      claimChecked.push(ctx.stepId);
      return next(input);
    };
    const actor2 = await app2.resume("r");
    expect(actor2.replay.stepsServedFromLog).toBe(1);
    expect(calls).toEqual([]);
    expect(claimChecked).toEqual([]);
    await actor2.sendAsync({ type: "APPROVE" });
    expect(await app2.result("r")).toEqual({ notes: ["notes on owls", "notes on owls"], approved: true });
    expect(calls).toEqual(["middleware:demo#write:1", "effect:demo#write:1"]);
    expect(claimChecked).toEqual(["demo#write:1"]);

    // A third app replays the finished execution: nothing runs at all.
    calls.length = 0;
    const app3 = createApp(config());
    const actor3 = await app3.resume("r");
    expect(actor3.replay.stepsServedFromLog).toBe(2);
    expect(calls).toEqual([]);
  });
});
