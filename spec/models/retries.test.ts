// Retries by default for retryable provider errors, on the app's (simulated) clock: 429 with Retry-After,
// connection refused, and a 400 that fails the step at once. Real provider, real loopback HTTP.
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { shouldRetryModelCall, retryAfterMs } from "../../actors/agents/retryableErrors.js";
import { createApp } from "../../actors/app.js";
import { simulatedClock, type SimulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { fromAiSdk } from "../../adapters/ai-sdk/index.js";
import { memoryStores } from "../../stores/memory.js";
import { startOpenAiServer, type OpenAiServer } from "../support/openaiServer.js";
import { PROVIDERS } from "../support/providers.js";

let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Waits (in real time, without asserting on it) until `cond` holds: the loopback I/O runs on the real event loop. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
}

const modelStep = async (app: ReturnType<typeof createApp>, id: string) =>
  (await app.log(id)).filter((r) => r.type.startsWith("loom.step.") && r.effectId === "model");

for (const provider of [PROVIDERS[0]!, PROVIDERS[3]!]) {
  describe(`retries through ${provider.name}`, () => {
    it("waits out a 429's Retry-After on the app's clock, then succeeds; only the final outcome is journaled", async () => {
      server = await startOpenAiServer(({ n }) =>
        n === 0 ? { status: 429, headers: { "retry-after": "2" }, message: "slow down" } : { text: "fine" },
      );
      const clock: SimulatedClock = simulatedClock(1_000);
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          clock,
          effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL))) },
        }),
      );
      await app.start(agentLoop$({ id: "r", model: "model" }), { executionId: "r", input: { prompt: "x" } });
      await until(() => server!.requests.length === 1 && clock.pendingTimers() > 0);
      clock.advance(1_999);
      await new Promise((r) => setTimeout(r, 20));
      expect(server.requests).toHaveLength(1);
      clock.advance(1);
      expect(await app.result("r")).toMatchObject({ text: "fine" });
      expect(server.requests).toHaveLength(2);
      const steps = await modelStep(app, "r");
      expect(steps.map((s) => s.type)).toEqual(["loom.step.completed"]);
      expect(steps[0]!.output).toMatchObject({ text: "fine", usage: { attempts: 2 } });
      await app.close();
    });

    it("retries a refused connection three times with backoff, then succeeds once the server listens", async () => {
      const probe = await startOpenAiServer(() => ({ text: "unused" }));
      const port = probe.port;
      await probe.close(); // nothing listens on `port` now: a real ECONNREFUSED
      let calls = 0;
      const counting: typeof fetch = async (input, init) => {
        calls++;
        if (calls === 4) server = await startOpenAiServer(() => ({ text: "back" }), { port });
        return fetch(input, init);
      };
      const clock = simulatedClock();
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          clock,
          effects: {
            model: createLlmEffect(fromAiSdk(provider.model(`http://127.0.0.1:${port}/v1`, { fetch: counting }))),
          },
        }),
      );
      await app.start(agentLoop$({ id: "c", model: "model" }), { executionId: "c", input: { prompt: "x" } });
      for (const [i, wait] of [500, 1_000, 2_000].entries()) {
        await until(() => clock.pendingTimers() > 0 && calls === i + 1);
        clock.advance(wait - 1);
        await new Promise((r) => setTimeout(r, 10));
        expect(calls).toBe(i + 1);
        clock.advance(1);
        await until(() => calls === i + 2);
      }
      expect(await app.result("c")).toMatchObject({ text: "back" });
      expect(calls).toBe(4);
      expect((await modelStep(app, "c"))[0]!.output).toMatchObject({ usage: { attempts: 4 } });
      await app.close();
    });

    it("fails the step at once on a non-retryable 400", async () => {
      server = await startOpenAiServer(() => ({ status: 400, message: "bad request: unknown parameter" }));
      const clock = simulatedClock();
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          clock,
          effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL))) },
        }),
      );
      await app.start(agentLoop$({ id: "b", model: "model" }), { executionId: "b", input: { prompt: "x" } });
      await expect(app.result("b")).rejects.toThrow(/bad request: unknown parameter/);
      expect(server.requests).toHaveLength(1);
      expect(clock.pendingTimers()).toBe(0);
      expect((await modelStep(app, "b")).map((s) => s.type)).toEqual(["loom.step.failed"]);
      await app.close();
    });

    it("retries nothing when retry is false", async () => {
      server = await startOpenAiServer(() => ({ status: 503, message: "overloaded" }));
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          clock: simulatedClock(),
          effects: { model: createLlmEffect(fromAiSdk(provider.model(server.baseURL)), { retry: false }) },
        }),
      );
      await app.start(agentLoop$({ id: "n", model: "model" }), { executionId: "n", input: { prompt: "x" } });
      await expect(app.result("n")).rejects.toThrow(/overloaded/);
      expect(server.requests).toHaveLength(1);
      await app.close();
    });
  });
}

describe("shouldRetryModelCall and retryAfterMs", () => {
  it("reads the AI SDK's isRetryable, then the status, then the connection error", () => {
    expect(shouldRetryModelCall({ isRetryable: false, statusCode: 503 })).toBe(false);
    expect(shouldRetryModelCall({ statusCode: 429 })).toBe(true);
    expect(shouldRetryModelCall({ statusCode: 404 })).toBe(false);
    expect(
      shouldRetryModelCall(Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } })),
    ).toBe(true);
    expect(shouldRetryModelCall(new Error("boom"))).toBe(false);
  });

  it("reads retry-after-ms, retry-after in seconds, and retry-after as an HTTP date", () => {
    expect(retryAfterMs({ responseHeaders: { "retry-after-ms": "250" } }, 0)).toBe(250);
    expect(retryAfterMs({ responseHeaders: { "Retry-After": "3" } }, 0)).toBe(3_000);
    expect(retryAfterMs({ responseHeaders: { "retry-after": new Date(10_000).toUTCString() } }, 4_000)).toBe(6_000);
    expect(retryAfterMs({ responseHeaders: {} }, 0)).toBeUndefined();
  });

  it("refuses bad retry options at construction", () => {
    expect(() => createLlmEffect({ id: "m", generate: async () => ({}) }, { retry: { attempts: 0 } })).toThrow(
      /createLlmEffect.retry.attempts/,
    );
  });
});
