// A 200-turn scripted agent: killed mid-run and resumed with no recorded turn re-run; its log grows linearly.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import type { Warning } from "../../actors/bus.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { memoryStores } from "../../stores/memory.js";
import { prng, toolOutput, workloadEffects } from "../support/workload.js";

const TURNS = 200;

async function runTurns(turns: number) {
  const { effects } = workloadEffects(turns);
  const app = createApp(defineConfig({ stores: memoryStores(), effects }));
  await app.start(
    agentLoop$({ id: "bench", model: "model", tools: ["search"], maxTurns: turns, warnTranscriptBytes: false }),
    { executionId: "r", input: { prompt: "research" } },
  );
  await app.result("r");
  return app.stats("r");
}

describe("a 200-turn agent", () => {
  // Kill turns drawn from a fixed seed so a failure names a turn anyone can rerun.
  const random = prng(2026);
  const killTurns = Array.from({ length: 3 }, () => 110 + Math.floor(random() * 85));

  it.each(killTurns)(
    "killed at turn %i resumes in a fresh app with zero model or tool calls for recorded turns",
    async (killTurn) => {
      const stores = memoryStores();
      const warnings: Warning[] = [];
      const loop = agentLoop$({
        id: "long",
        model: "model",
        tools: ["search"],
        maxTurns: TURNS,
        onWarn: (w) => warnings.push(w),
      });
      const first = workloadEffects(TURNS);
      let died!: () => void;
      const death = new Promise<void>((resolve) => (died = resolve));
      const dying = {
        ...first.effects,
        search: createToolEffect(async (input: unknown, ctx) => {
          if (ctx.stepId === `long#turn:${killTurn}:tool:0`) {
            died();
            return new Promise<never>(() => {}); // the process dies with this call in flight
          }
          return first.effects.search!.run(input, ctx);
        }),
      };
      const app1 = createApp(defineConfig({ stores, effects: dying }));
      await app1.start(loop, { executionId: "long", input: { prompt: "research" } });
      await death;
      await app1.close();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.turn as number).toBeLessThan(killTurn);

      const second = workloadEffects(TURNS);
      const app2 = createApp(defineConfig({ stores, effects: second.effects, logics: [loop] }));
      const actor = await app2.resume("long");
      expect(actor.replay.stepsToRun).toBe(1);
      expect(actor.replay.fromSnapshotSeq).toBeGreaterThan(0);
      const output = (await app2.result("long")) as { turns: number; text: string };
      expect(output).toMatchObject({ turns: TURNS, text: `Done after ${TURNS} turns.` });
      expect(second.counters).toEqual({ modelCalls: TURNS - killTurn - 1, toolCalls: TURNS - 1 - killTurn });
      expect(warnings).toHaveLength(2);
      const log = await app2.log("long");
      expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
      const tool = log.find((r) => r.stepId === `long#turn:${killTurn}:tool:0`);
      expect(tool?.output).toEqual(toolOutput(42, killTurn));
    },
  );

  it("grows its log linearly in turns: the per-turn slope is the same from 50 to 100 as from 100 to 200", async () => {
    const [s50, s100, s200] = [await runTurns(50), await runTurns(100), await runTurns(200)];
    const slopeLow = (s100.logBytes - s50.logBytes) / 50;
    const slopeHigh = (s200.logBytes - s100.logBytes) / 100;
    console.log(
      `log bytes: 50 turns ${s50.logBytes}, 100 turns ${s100.logBytes}, 200 turns ${s200.logBytes}; slope ${slopeLow.toFixed(0)} then ${slopeHigh.toFixed(0)} bytes/turn`,
    );
    expect(slopeHigh / slopeLow).toBeGreaterThan(0.85);
    expect(slopeHigh / slopeLow).toBeLessThan(1.15);
    expect(s200.logBytes / s50.logBytes).toBeLessThan(4.5); // quadratic growth would be ~16x
    expect(s200.logBytes).toBeLessThan(2 * s200.stateBytes);
  });
});
