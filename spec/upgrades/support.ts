// The upgrades suite's subjects: one flow in several versions, counted effects, and fs stores that a
// test closes and reopens (a process restart: nothing survives but the directory).
import { assign, setup } from "xstate";
import { createToolEffect } from "../../actors/effects/effect.js";
import { effectActor } from "../../machines/helpers/effectActor.js";
import { patched, deprecatePatch, type PatchGuard } from "../../machines/helpers/patches.js";
import { tempDirs } from "../support/tempDirs.js";

export const { tempDir, removeTempDirs } = tempDirs("upgrades");

/** Counted effects: `work` answers `<label>:<input>`; every live run is counted per step id. */
export function countedEffects() {
  const runs = new Map<string, number>();
  const effects = {
    work: createToolEffect(async (input: string, ctx) => {
      runs.set(ctx.stepId, (runs.get(ctx.stepId) ?? 0) + 1);
      return `done:${input}`;
    }),
  };
  return { runs, effects, total: () => [...runs.values()].reduce((a, b) => a + b, 0) };
}

/**
 * The flow: prepare (effect) -> waiting (CONTINUE) -> finish (effect) -> closing (CLOSE) -> done. `shape: "review"` puts a
 * review step between waiting and finish: a change that an execution parked in `waiting` cannot replay.
 * `version` as XState's own `createMachine({ version })`, or as `meta.version` with `versionIn: "meta"`.
 */
export function flow(
  options: { version?: string; versionIn?: "config" | "meta"; shape?: "plain" | "review"; guard?: PatchGuard } = {},
) {
  const { version, versionIn = "config", shape = "plain", guard } = options;
  const identity = version === undefined ? {} : versionIn === "meta" ? { meta: { version } } : { version };
  const afterWaiting = shape === "review" ? "reviewing" : "finishing";
  return setup({
    types: {} as { context: { trail: string[] }; input: { name: string }; output: { trail: string[] } },
    actors: { work: effectActor<string, string>() },
  }).createMachine({
    id: "flow",
    ...identity,
    context: ({ input }) => ({ trail: [input.name] }),
    initial: "preparing",
    states: {
      preparing: {
        invoke: {
          src: "work",
          id: "prepare",
          input: "prepare",
          onDone: {
            target: "waiting",
            actions: assign({ trail: ({ context, event }) => [...context.trail, event.output] }),
          },
        },
      },
      waiting: {
        on: {
          CONTINUE: guard
            ? [
                {
                  guard,
                  target: "greeting",
                  actions: assign({ trail: ({ context }) => [...context.trail, "new path"] }),
                },
                { target: afterWaiting, actions: assign({ trail: ({ context }) => [...context.trail, "old path"] }) },
              ]
            : afterWaiting,
        },
      },
      greeting: {
        invoke: {
          src: "work",
          id: "greet",
          input: "greet",
          onDone: {
            target: "finishing",
            actions: assign({ trail: ({ context, event }) => [...context.trail, event.output] }),
          },
        },
      },
      reviewing: {
        invoke: {
          src: "work",
          id: "review",
          input: "review",
          onDone: {
            target: "finishing",
            actions: assign({ trail: ({ context, event }) => [...context.trail, event.output] }),
          },
        },
      },
      finishing: {
        invoke: {
          src: "work",
          id: "finish",
          input: "finish",
          onDone: {
            target: "closing",
            actions: assign({ trail: ({ context, event }) => [...context.trail, event.output] }),
          },
        },
      },
      closing: { on: { CLOSE: "done" } },
      done: { type: "final" },
    },
    output: ({ context }) => ({ trail: context.trail }),
  });
}

/**
 * The flow with its CONTINUE branch guarded by `patched("greet")` (or `deprecatePatch("greet")`): the new
 * path greets (one more effect step) before finishing; the old one finishes at once.
 */
export function patchedFlow(options: { version?: string; deprecated?: boolean } = {}) {
  return flow({ ...options, guard: options.deprecated ? deprecatePatch("greet") : patched("greet") });
}
