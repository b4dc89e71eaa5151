// ADR 0137 D1 (and the ADR 0140 D7 amendment): warn, never act. One test per sentence of the decision.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  agentLoop$,
  configureAgentLoopDefaults,
  DEFAULT_STATE_GROWTH_WARN_BYTES,
} from "../../actors/agents/agentLoop.js";
import { WARNING_CODES } from "../../actors/constants.js";
import { createApp } from "../../actors/app.js";
import type { Warning } from "../../actors/bus.js";
import { simulatedClock } from "../../actors/clock.js";
import { defineConfig } from "../../actors/config.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { createSummarizerEffect } from "../../actors/agents/summarizer.js";
import type { ModelRequest } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";
import { workloadEffects } from "../support/workload.js";

const TURNS = 12; // ~2.7 kB per turn: crosses 16 KiB around turn 6
const threshold = 16 * 1024;

async function run(
  options: {
    warnTranscriptBytes?: number | false;
    onWarn?: (w: Warning) => void;
    appOnWarn?: (w: Warning) => void;
    stores?: ReturnType<typeof memoryStores>;
  } = {},
) {
  const { effects, counters } = workloadEffects(TURNS);
  const requests: string[] = [];
  const model = effects.model!;
  const recording = {
    ...model,
    run: async (input: ModelRequest, ctx: never) => (requests.push(JSON.stringify(input)), model.run(input, ctx)),
  };
  const stores = options.stores ?? memoryStores();
  const app = createApp(
    defineConfig({
      stores,
      clock: simulatedClock(1_000),
      effects: { ...effects, model: recording },
      ...(options.appOnWarn ? { observability: { onWarn: options.appOnWarn } } : {}),
    }),
  );
  const loop = agentLoop$({
    id: "grower",
    model: "model",
    tools: ["search"],
    ...(options.warnTranscriptBytes === undefined
      ? { warnTranscriptBytes: threshold }
      : { warnTranscriptBytes: options.warnTranscriptBytes }),
    ...(options.onWarn ? { onWarn: options.onWarn } : {}),
  });
  await app.start(loop, { executionId: "g", input: { prompt: "grow" } });
  const output = (await app.result("g")) as { transcriptBytes: number };
  return { app, stores, output, requests, log: JSON.stringify(await app.log("g")), counters, loop };
}

afterEach(() => {
  configureAgentLoopDefaults({ onWarn: undefined, warnTranscriptBytes: undefined });
  vi.restoreAllMocks();
});

describe("ADR 0137 D1: warn, never act", () => {
  it("D1: with no compaction, past warnTranscriptBytes the loop emits ONE warning per run", async () => {
    const warnings: Warning[] = [];
    const { output } = await run({ onWarn: (w) => warnings.push(w) });
    expect(output.transcriptBytes).toBeGreaterThan(threshold + 8 * 1024);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      code: WARNING_CODES.agentStateGrowth,
      executionId: "g",
      loopId: "grower",
      warnTranscriptBytes: threshold,
    });
    expect(warnings[0]!.transcriptBytes as number).toBeGreaterThan(threshold);
  });

  it("D1: the warning goes to AgentLoopConfig.onWarn, else the app's observability.onWarn, else configureAgentLoopDefaults, else a process warning", async () => {
    const loopSink: Warning[] = [];
    const appSink: Warning[] = [];
    const defaultSink: Warning[] = [];
    configureAgentLoopDefaults({ onWarn: (w) => defaultSink.push(w) });
    await run({ onWarn: (w) => loopSink.push(w), appOnWarn: (w) => appSink.push(w) });
    expect([loopSink.length, appSink.length, defaultSink.length]).toEqual([1, 0, 0]);
    await run({ appOnWarn: (w) => appSink.push(w) });
    expect([loopSink.length, appSink.length, defaultSink.length]).toEqual([1, 1, 0]);
    await run();
    expect([loopSink.length, appSink.length, defaultSink.length]).toEqual([1, 1, 1]);
    configureAgentLoopDefaults({ onWarn: undefined });
    const emit = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    await run();
    expect(emit).toHaveBeenCalledTimes(1);
    expect(emit.mock.calls[0]![1]).toMatchObject({ code: "LOOM_AGENT_STATE_GROWTH" });
  });

  it("D1: a throwing sink never fails the run", async () => {
    const emit = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const { output } = await run({
      onWarn: () => {
        throw new Error("sink down");
      },
    });
    expect(output).toMatchObject({ turns: TURNS });
    expect(emit.mock.calls.map((c) => String(c[0]))).toContainEqual(
      expect.stringContaining("onWarn threw while reporting LOOM_AGENT_STATE_GROWTH: sink down"),
    );
  });

  it("D1 + D7: the text names compaction, docs/scaling.md and the claim-check opt-in with its caveat", async () => {
    const warnings: Warning[] = [];
    await run({ onWarn: (w) => warnings.push(w) });
    const text = warnings[0]!.message;
    expect(text).toContain("compaction: { toolId, afterBytes }");
    expect(text).toContain("createSummarizerEffect");
    expect(text).toContain("docs/scaling.md");
    expect(text).toContain("execution.claimCheck");
    expect(text).toContain("withheld from the model except its digest/preview");
  });

  it("D1: the default threshold is DEFAULT_STATE_GROWTH_WARN_BYTES = 256 KiB", async () => {
    expect(DEFAULT_STATE_GROWTH_WARN_BYTES).toBe(262_144);
    const warnings: Warning[] = [];
    const loop = agentLoop$({ id: "d", model: "model", onWarn: (w) => warnings.push(w) });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: createLlmEffect(scriptedModel([{ text: "x".repeat(200_000) }])) },
      }),
    );
    await app.start(loop, { executionId: "small", input: { prompt: "y" } });
    await app.result("small");
    const big = agentLoop$({ id: "d2", model: "model", onWarn: (w) => warnings.push(w) });
    const app2 = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: { model: createLlmEffect(scriptedModel([{ text: "x".repeat(270_000) }])) },
      }),
    );
    await app2.start(big, { executionId: "big", input: { prompt: "y" } });
    await app2.result("big");
    expect(warnings.filter((w) => w.executionId === "small")).toHaveLength(0);
    expect(warnings.filter((w) => w.executionId === "big")).toHaveLength(1);
  });

  it("D1: warnTranscriptBytes: false turns it off", async () => {
    const warnings: Warning[] = [];
    configureAgentLoopDefaults({ onWarn: (w) => warnings.push(w), warnTranscriptBytes: 1 });
    await run({ warnTranscriptBytes: false });
    expect(warnings).toHaveLength(0);
  });

  it("D1: nothing is written to the log, and the log and model requests are byte-identical with and without the warning", async () => {
    const warned: Warning[] = [];
    const on = await run({ onWarn: (w) => warned.push(w) });
    const off = await run({ warnTranscriptBytes: false });
    expect(warned).toHaveLength(1);
    expect(on.log).toBe(off.log);
    expect(on.requests).toEqual(off.requests);
    expect(on.log).not.toContain(WARNING_CODES.agentStateGrowth);
  });

  it("D1: a resume in a fresh app replays the crossing turn and warns again, once", async () => {
    const warnings: Warning[] = [];
    const loop = agentLoop$({
      id: "grower",
      model: "model",
      tools: ["search"],
      warnTranscriptBytes: threshold,
      onWarn: (w) => warnings.push(w),
    });
    const stores = memoryStores();
    const app1 = createApp(defineConfig({ stores, effects: workloadEffects(TURNS).effects }));
    await app1.start(loop, { executionId: "h", input: { prompt: "grow" } });
    await app1.result("h");
    expect(warnings).toHaveLength(1);
    // The process "died" three turns before the end: keep the log up to the model step of turn 9.
    const log = await stores.events.read("h");
    const lastKept = log.findIndex((r) => r.stepId === "grower#turn:9:model") + 1;
    const cut = memoryStores();
    await cut.events.append("h", 0, log.slice(0, lastKept + 1));
    const resumed = workloadEffects(TURNS);
    const fresh = createApp(defineConfig({ stores: cut, effects: resumed.effects, logics: [loop] }));
    await fresh.resume("h");
    expect(await fresh.result("h")).toMatchObject({ turns: TURNS });
    expect(warnings).toHaveLength(2);
    expect(warnings[1]!.turn).toBe(warnings[0]!.turn);
    expect(resumed.counters).toEqual({ modelCalls: 2, toolCalls: 2 });
  });

  it("D1: a loop with compaction does not warn, though its transcript passes warnTranscriptBytes before each compaction", async () => {
    // Compaction fires only once the transcript is over afterBytes; with warnTranscriptBytes below that, every
    // compaction is preceded by a macrostep whose transcript is past the warning's threshold.
    const afterBytes = 8_192;
    const warnAt = 4_096;
    const grow = async (compaction: boolean) => {
      const warnings: Warning[] = [];
      let peak = 0;
      const { effects } = workloadEffects(TURNS);
      const app = createApp(
        defineConfig({
          stores: memoryStores(),
          effects: { ...effects, summarize: createSummarizerEffect(scriptedModel(() => ({ text: "short summary" }))) },
          observability: {
            inspect: (event) => {
              const bytes =
                event.type === "@xstate.snapshot"
                  ? (event.snapshot as { context?: { transcriptBytes?: unknown } }).context?.transcriptBytes
                  : undefined;
              if (typeof bytes === "number") peak = Math.max(peak, bytes);
            },
          },
        }),
      );
      const loop = agentLoop$({
        id: "c",
        model: "model",
        tools: ["search"],
        ...(compaction ? { compaction: { toolId: "summarize", afterBytes } } : {}),
        warnTranscriptBytes: warnAt,
        onWarn: (w) => warnings.push(w),
      });
      await app.start(loop, { executionId: "c", input: { prompt: "grow" } });
      expect(await app.result("c")).toMatchObject({ turns: TURNS });
      const compactions = (await app.log("c")).filter((r) => String(r.stepId).endsWith(":compact")).length;
      return { warnings, peak, compactions };
    };
    // The control: the same loop without compaction crosses warnTranscriptBytes and warns.
    const control = await grow(false);
    expect(control.peak).toBeGreaterThan(warnAt);
    expect(control.warnings).toHaveLength(1);
    const compacted = await grow(true);
    expect(compacted.compactions).toBeGreaterThan(1);
    expect(compacted.peak).toBeGreaterThan(afterBytes); // past warnAt too: the warning's condition held, compaction alone kept it quiet
    expect(compacted.warnings).toHaveLength(0);
  });
});
