// The workload every measurement shares: the seeds' harness (spec/support/workload.ts), a real
// defineConfig app and agentLoop$ on the scripted model, 1.5-4 kB of seeded tool output per turn,
// no compaction, with claim-check off, on (256-char preview) or on with preview: false.
import { agentLoop$ } from "../actors/agents/agentLoop.js";
import { createApp, type App } from "../actors/app.js";
import { defineConfig, type LoomConfig } from "../actors/config.js";
import { createToolEffect, type Effect } from "../actors/effects/effect.js";
import type { Stores } from "../stores/types.js";
import { workloadEffects } from "../spec/support/workload.js";
import { span, type Sample } from "./measure.js";

export type ClaimCheckMode = "off" | "on" | "on, preview: false";
export const CLAIM_CHECK_MODES: ClaimCheckMode[] = ["off", "on", "on, preview: false"];

/** The execution id every benchmark run uses (one execution per store). */
export const EXECUTION_ID = "bench";
const LOOP_ID = "harness";

/** The agent machine; built the same way in every process, so its hash matches on resume. */
export function benchLoop(turns: number) {
  return agentLoop$({ id: LOOP_ID, model: "model", tools: ["search"], maxTurns: turns, warnTranscriptBytes: false });
}

/** The app's config for `mode` over `stores`, with the workload's effects (or `effects`). */
export function benchConfig(
  stores: Stores,
  turns: number,
  mode: ClaimCheckMode,
  effects = workloadEffects(turns).effects,
): LoomConfig {
  const claimCheck =
    mode === "off"
      ? undefined
      : { store: stores.content, toolIds: ["search"], ...(mode === "on" ? {} : { preview: false as const }) };
  return defineConfig({ stores, effects, ...(claimCheck ? { execution: { claimCheck } } : {}) });
}

/** Runs the agent to its end; resolves with the app (still open) and the time the run took. */
export async function runAgent(
  stores: Stores,
  turns: number,
  mode: ClaimCheckMode,
  executionId = EXECUTION_ID,
): Promise<{ app: App; sample: Sample }> {
  const app = createApp(benchConfig(stores, turns, mode));
  const end = span();
  await app.start(benchLoop(turns), { executionId, input: { prompt: "research" } });
  await app.result(executionId);
  return { app, sample: end() };
}

/** The turn whose tool call an interrupted run never finishes: the last one that calls a tool. */
export const stallTurn = (turns: number): number => turns - 2;

/**
 * The workload's effects, except that the search of `stallTurn(turns)` never resolves: the run stops
 * there, as a process that dies mid-call does. `reached` resolves when that call starts.
 */
export function stallingEffects(turns: number): { effects: Record<string, Effect>; reached: Promise<void> } {
  const { effects } = workloadEffects(turns);
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const search = effects.search!;
  return {
    reached,
    effects: {
      ...effects,
      search: createToolEffect((input: unknown, ctx) => {
        const turn = Number(/turn:(\d+):tool/.exec(ctx.stepId)?.[1] ?? 0);
        if (turn < stallTurn(turns)) return search.run(input, ctx);
        reach();
        return new Promise<never>(() => undefined);
      }),
    },
  };
}

/**
 * Runs the agent until the last tool call hangs, then closes the app: the journal holds every turn but
 * the last: the latest snapshot is behind the head, so a resume replays the tail and re-starts that call.
 * With `closeSnapshot` the close writes a snapshot at the head (`snapshotOnClose`): a resume replays nothing.
 */
export async function runInterrupted(
  stores: Stores,
  turns: number,
  mode: ClaimCheckMode = "off",
  closeSnapshot = false,
): Promise<void> {
  const { effects, reached } = stallingEffects(turns);
  const config = benchConfig(stores, turns, mode, effects);
  // closeSnapshot: app.close() writes a snapshot at the head (execution.snapshotOnClose); without it the tail stays to replay, as after a crash.
  const app = createApp(
    closeSnapshot ? { ...config, execution: { ...config.execution, snapshotOnClose: true } } : config,
  );
  await app.start(benchLoop(turns), { executionId: EXECUTION_ID, input: { prompt: "research" } });
  await reached;
  // The snapshot write is not awaited by the runtime: let one that was just queued land first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await app.close();
}

/** Resumes the interrupted execution in a new app over `stores`; resolves once the replay is done. */
export async function resumeInterrupted(
  stores: Stores,
  turns: number,
  mode: ClaimCheckMode = "off",
): Promise<{ app: App; reached: Promise<void> }> {
  const { effects, reached } = stallingEffects(turns);
  const app = createApp(benchConfig(stores, turns, mode, effects));
  await app.resume(EXECUTION_ID, benchLoop(turns));
  return { app, reached };
}
