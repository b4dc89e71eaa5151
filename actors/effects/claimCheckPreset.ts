// execution.claimCheck (ADR 0140 D1-D4, D6, D9, L): the opt-in that wires the classic middleware for an
// agent's listed tools, validated whole at boot (./claimCheckConfig.ts). Unset, it adds nothing.
import { CONTENT_REF_KEY } from "../../machines/helpers/constants.js";
import { invokedAs } from "../../machines/helpers/invokeAs.js";
import type { RuntimeBus, Warning } from "../bus.js";
import { WARNING_CODES } from "../constants.js";
import {
  AGENT_TOOL_STEP,
  claimCheckMiddleware,
  DEFAULT_CLAIM_CHECK_CAP_BYTES,
  DEFAULT_CLAIM_CHECK_PREVIEW_CHARS,
  previewDigest,
} from "./claimCheck.js";
import type { ClaimCheckConfig } from "./claimCheckConfig.js";
import type { Effect, EffectContext, EffectMiddleware } from "./effect.js";

export { validateClaimCheck, type ClaimCheckConfig } from "./claimCheckConfig.js";

/** Builds the claim-check layer for the chain's slot (just inside the kill switch, ADR 0140 D5). */
export function claimCheckLayer(
  config: ClaimCheckConfig,
  effects: Record<string, Effect>,
  warn: (error: unknown, ctx: EffectContext) => void,
): EffectMiddleware {
  const listed = new Set(config.toolIds);
  const reclaimable = config.reclaimable === true ? listed : new Set(config.reclaimable ?? []);
  const preview = config.preview ?? DEFAULT_CLAIM_CHECK_PREVIEW_CHARS;
  return claimCheckMiddleware({
    store: config.store,
    capBytes: config.inlineCapBytes ?? DEFAULT_CLAIM_CHECK_CAP_BYTES,
    ...(config.digests ? { digests: config.digests } : {}),
    ...(preview === false ? {} : { defaultDigest: previewDigest(preview) }),
    retain: (ctx) => !reclaimable.has(ctx.effectId),
    envelopesAreData: true,
    // Only agentLoop$ tool frames of listed tools (D9): a step the machine invoked as a tool (invokeAs, as the loop
    // does, whatever the effect's kind) under a tool-frame step id. A plain invoke of a tool effect is a flow step,
    // however its step id looks; a task effect the loop calls as a tool is a tool frame.
    appliesTo: (ctx) =>
      listed.has(ctx.effectId) &&
      ctx.taskKind === "tool" &&
      invokedAs(ctx) === "tool" &&
      AGENT_TOOL_STEP.test(ctx.stepId),
    // A media result passes through: the loop renders its parts, an envelope would blind the model (D9).
    passThrough: (ctx) => effects[ctx.effectId]?.returnsMedia === true,
    ...(config.onOffload ? { onOffload: config.onOffload } : {}),
    onError: warn,
  });
}

/** The app's claim-check layer for `execution.claimCheck`: each offload on the bus (`offload`), a throwing `onOffload` a warning. */
export function appClaimCheckLayer(
  config: ClaimCheckConfig,
  effects: Record<string, Effect>,
  bus: RuntimeBus,
  warn: (warning: Warning) => void,
): EffectMiddleware {
  const onOffload = config.onOffload;
  return claimCheckLayer(
    {
      ...config,
      onOffload: (event) => {
        const address = event.envelope.ref[CONTENT_REF_KEY];
        bus.emit("offload", {
          executionId: event.ctx.executionId,
          stepId: event.ctx.stepId,
          address,
          size: event.size,
        });
        onOffload?.(event);
      },
    },
    effects,
    (error, ctx) =>
      warn({
        code: WARNING_CODES.claimCheckOnOffload,
        message: `execution.claimCheck.onOffload threw (the call still succeeded): ${error instanceof Error ? error.message : String(error)}`,
        executionId: ctx.executionId,
        stepId: ctx.stepId,
      }),
  );
}
