// The built-in offline model: deterministic replies from a script. The default for stories and tests.
import type { EffectContext } from "../../actors/effects/effect.js";
import { ModelReplyError } from "../../actors/errors.js";
import { checkModelReply, type Model } from "../../actors/agents/model.js";
import type { ModelReply, ModelRequest } from "../../machines/helpers/messages.js";

/** A scripted model's script: replies in order, or a function of the request and the call number (async or not). */
export type Script = ModelReply[] | ((request: ModelRequest, call: number) => ModelReply | Promise<ModelReply>);

const TURN_STEP = /#turn:(\d+):model$/;

/**
 * A scripted model: one reply per call, in order, or computed from the request.
 *
 * The call number is the agent loop turn (read from the step id `<loop>#turn:<i>:model`), so a run resumed
 * in a fresh process gets the reply its next turn would have got; other callers count calls per model.
 * A function may be async: its promise is awaited, and what it resolves to is checked like any reply (a
 * rejection fails the step with its own error). A call past the script's end, or a reply that is undefined
 * or not a ModelReply, fails with ModelReplyError naming the step.
 *
 * @example
 * createLlmEffect(scriptedModel(async (request, call) => JSON.parse(await readFile(`replies/${call}.json`, "utf8"))))
 * @example
 * createLlmEffect(scriptedModel([{ toolCalls: [{ toolName: "search", input: { q: "owls" } }] }, { text: "Done." }]))
 */
export function scriptedModel(script: Script, options: { id?: string } = {}): Model & { calls: number } {
  if (!Array.isArray(script) && typeof script !== "function")
    throw new TypeError("scriptedModel(script): an array of replies or a function (request, call) => reply.");
  let counter = 0;
  const model = {
    id: options.id ?? "scripted",
    calls: 0,
    async generate(request: ModelRequest, ctx: EffectContext): Promise<ModelReply> {
      model.calls++;
      const turn = TURN_STEP.exec(ctx.stepId);
      const call = turn ? Number(turn[1]) : counter++;
      if (Array.isArray(script) && call >= script.length) {
        throw new ModelReplyError(
          ctx.stepId,
          "reply",
          `is missing: scriptedModel has no reply scripted for call ${call} (the script has ${script.length}; add replies, or end the run with a reply without toolCalls)`,
        );
      }
      // An async script's reply is awaited: a Promise passes the reply check (it is an object) but has no JSON form.
      const reply = Array.isArray(script) ? script[call] : await script(request, call);
      if (reply === undefined || reply === null) {
        const where = Array.isArray(script)
          ? `reply ${call} of the script is ${String(reply)}`
          : `script(request, ${call}) returned ${String(reply)} (or a promise of it)`;
        throw new ModelReplyError(ctx.stepId, "reply", `is missing: scriptedModel's ${where}`);
      }
      checkModelReply(reply, ctx.stepId);
      return structuredClone(reply);
    },
  };
  return model;
}
