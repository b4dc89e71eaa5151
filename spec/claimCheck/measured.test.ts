// ADR 0140 "Measured", reproduced on our runtime: 50 and 200 turns, 1.5-4 kB tool output per turn,
// claim-check off / on (256-char preview) / on with preview: false. Sizes are exact bytes.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { workloadEffects } from "../support/workload.js";

type Mode = "off" | "on" | "on, preview: false";

export async function measure(turns: number, mode: Mode) {
  const stores = memoryStores();
  const { effects } = workloadEffects(turns);
  const app = createApp(
    defineConfig({
      stores,
      effects,
      ...(mode === "off"
        ? {}
        : {
            execution: {
              claimCheck: {
                store: stores.content,
                toolIds: ["search"],
                ...(mode === "on" ? {} : { preview: false as const }),
              },
            },
          }),
    }),
  );
  await app.start(
    agentLoop$({ id: "harness", model: "model", tools: ["search"], maxTurns: turns, warnTranscriptBytes: false }),
    { executionId: "m", input: { prompt: "research" } },
  );
  await app.result("m");
  return app.stats("m");
}

const LOOM = {
  50: { off: [297.8, 4043], on: [70.8, 953], "on, preview: false": [43.0, 551] },
  200: { off: [1201.4, 60421], on: [283.4, 13807], "on, preview: false": [172.1, 7787] },
} as const;

describe("ADR 0140 measured, on loomwork", () => {
  it("reproduces the table: state and log per row, beside Loom's", async () => {
    const rows: string[] = [];
    const results: Record<string, { stateBytes: number; logBytes: number }> = {};
    for (const turns of [50, 200] as const) {
      for (const mode of ["off", "on", "on, preview: false"] as const) {
        const s = await measure(turns, mode);
        results[`${turns} ${mode}`] = s;
        const [loomState, loomLog] = LOOM[turns][mode];
        rows.push(
          `${turns} | ${mode} | ${(s.stateBytes / 1000).toFixed(1)} KB | ${(s.logBytes / 1000).toFixed(0)} KB | Loom ${loomState} KB | ${loomLog} KB`,
        );
        // Goal (issue 9): state no larger than Loom's; the log is reported beside it (npm run bench).
        expect(s.stateBytes / 1000).toBeLessThan(loomState);
        expect(s.logBytes / 1000).toBeLessThan(loomLog);
      }
    }
    console.log(["turns | claim-check | state | log | Loom state | Loom log", ...rows].join("\n"));
    const off = results["200 off"]!.stateBytes;
    console.log(
      `state reduction at 200 turns: ${(off / results["200 on"]!.stateBytes).toFixed(1)}x with the preview (Loom 4.2x), ${(off / results["200 on, preview: false"]!.stateBytes).toFixed(1)}x without (Loom 7.0x)`,
    );
    expect(off / results["200 on"]!.stateBytes).toBeGreaterThan(3);
    expect(results["200 on"]!.stateBytes).toBeLessThan(4.5 * results["50 on"]!.stateBytes);
  });
});
