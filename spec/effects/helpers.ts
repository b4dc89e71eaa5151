// Machines and effects the effect-chain specs share.
import { assign, setup } from "xstate";
import type { App } from "../../actors/app.js";
import { createLlmEffect, type Model } from "../../actors/agents/model.js";
import { effectActor, stepInput } from "../../machines/helpers/effectActor.js";
import type { ModelReply, ModelRequest } from "../../machines/helpers/messages.js";
import type { StoredRecord } from "../../stores/types.js";

/** A machine that invokes `src` once: done with its output; on error, unhandled (the execution fails) or handled. */
export function oneStep(src: string, options: { handleError?: boolean; id?: string } = {}) {
  return setup({ actors: { [src]: effectActor() } }).createMachine({
    id: options.id ?? `one-${src}`,
    initial: "running",
    context: ({ input }: { input?: unknown }) => ({ input: input ?? { q: "owls" }, error: null as unknown }),
    states: {
      running: {
        invoke: {
          src,
          id: src,
          input: ({ context }) => context.input,
          onDone: "done",
          ...(options.handleError
            ? { onError: { target: "failed", actions: assign({ error: ({ event }) => event.error }) } }
            : {}),
        },
      },
      done: { type: "final" },
      failed: { type: "final" },
    },
    output: ({ context }) => ({ error: context.error }),
  });
}

/** A machine that calls the llm effect `model` up to `calls` times in a row, each a named step. */
export function modelLoop(calls: number, options: { handleError?: boolean; id?: string } = {}) {
  return setup({
    types: {} as { context: { turn: number; replies: string[]; error: unknown } },
    actors: { model: effectActor<ModelRequest, ModelReply>() },
  }).createMachine({
    id: options.id ?? "looper",
    context: { turn: 0, replies: [], error: null },
    initial: "calling",
    states: {
      calling: {
        invoke: {
          src: "model",
          id: "model",
          input: ({ context }) =>
            stepInput(`turn:${context.turn}:model`, {
              messages: [{ role: "user", content: `turn ${context.turn}` }],
              tools: [],
            }),
          onDone: {
            target: "next",
            actions: assign({
              turn: ({ context }) => context.turn + 1,
              replies: ({ context, event }) => [...context.replies, String(event.output.text)],
            }),
          },
          ...(options.handleError
            ? { onError: { target: "refused", actions: assign({ error: ({ event }) => event.error }) } }
            : {}),
        },
      },
      next: { always: [{ guard: ({ context }) => context.turn < calls, target: "calling" }, { target: "done" }] },
      done: { type: "final" },
      refused: { type: "final" },
    },
    output: ({ context }) => ({ replies: context.replies, error: context.error }),
  });
}

/** A model that answers "reply <n>" with fixed usage, counting its calls. */
export function countingModel(usage = { inputTokens: 10, outputTokens: 5 }) {
  const requests: ModelRequest[] = [];
  const model: Model = {
    id: "counting",
    generate: async (request) => {
      requests.push(request);
      return { text: `reply ${requests.length}`, usage };
    },
  };
  return { effect: createLlmEffect(model), requests };
}

/** The records of one type in an execution's log. */
export async function recordsOf(app: App, executionId: string, type: string): Promise<StoredRecord[]> {
  return (await app.log(executionId)).filter((r) => r.type === type);
}

/** Settles an execution and returns how it ended (never rejects). */
export async function outcome(app: App, executionId: string): Promise<{ ok: boolean; value: unknown }> {
  return app.result(executionId).then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, value: error }),
  );
}
