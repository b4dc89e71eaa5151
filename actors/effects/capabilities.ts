// The capability ring: middleware the app installs from `capabilities` (grants, quotas, guardRequest,
// metering, retry, timeout). It sits inside secret redaction and outside every user middleware
// (machines/effectChain.ts). Quotas count from the journal (./meter.ts), so they hold across a resume.
// Metering is always on and runs here; the configured layers are in ./ringLayers.ts (grants, quotas,
// guardRequest, and their errors) and ./retry.ts (retry, timeout).
import type { ModelRequest } from "../../machines/helpers/messages.js";
import type { EffectContext } from "./effect.js";
import type { ChainStep, StepLayer } from "./layers.js";
import { ConfigError } from "../errors.js";
import { usageOf, type Meter, type QuotaOptions } from "./meter.js";
import { retryMiddleware, timeoutMiddleware } from "./retry.js";
import { validateRetryOptions, type RetryOptions } from "./retryOptions.js";
import { grantsLayer, guardLayer, quotaLayer, type GuardVerdict } from "./ringLayers.js";

export { emptyUsage, foldUsage, Meter, QuotaExceededError, usageOf } from "./meter.js";
export type { ExecutionUsage, QuotaOptions, TreeUsage } from "./meter.js";

export type { GuardVerdict } from "./ringLayers.js";

/** The `capabilities` group: grants, quotas, guardRequest, retry and timeouts. */
export interface CapabilitiesOptions {
  /**
   * Which effects each logic (by machine id) may call; `"*"` applies to logics not listed. A logic
   * with no entry (and no `"*"`) is not restricted. A call outside its grant fails with `GrantDeniedError`.
   * @example grants: { researcher: ["search", "model"], "*": [] }
   */
  grants?: Record<string, string[]>;
  /** Limits on model calls per tree of executions (a single agent is a tree of one); a call past them fails with `QuotaExceededError`. */
  quotas?: QuotaOptions;
  /**
   * Sees every model request (llm effects) before the model does: return nothing to send it as is,
   * a rewritten request to send that instead, or `{ veto: reason }` (or throw) to refuse it with `GuardRefusedError`.
   */
  guardRequest?: (request: ModelRequest, ctx: EffectContext) => GuardVerdict | Promise<GuardVerdict>;
  /** Retries every effect's failed calls (see `retryMiddleware`). Off unless set. */
  retry?: RetryOptions;
  /** Fails a call that has not settled in time with `EffectTimeoutError`: one number for all effects, or per effect id (`"*"` for the rest). */
  timeoutMs?: number | Record<string, number>;
}

/**
 * The ring's layers for a configuration, outside in: grants, quotas, guardRequest, metering, retry, timeout.
 * Built once per app; each applies to the steps it guards (a transient call has no grants, quotas or metering).
 */
export function capabilityRing(options: CapabilitiesOptions | undefined, meter: Meter): StepLayer[] {
  const layers: StepLayer[] = [];
  // Metering is always on (it only reads the reply); the rest is what `capabilities` configures.
  const { grants, quotas, guardRequest, retry, timeoutMs } = options ?? {};
  const journaledModel = (step: ChainStep) => step.journaled && step.isModel;
  if (grants) layers.push(grantsLayer(grants));
  if (quotas) layers.push({ appliesTo: journaledModel, run: quotaLayer(meter, quotas) });
  if (guardRequest) layers.push({ appliesTo: (step) => step.isModel, run: guardLayer(guardRequest) });
  layers.push({
    appliesTo: journaledModel,
    run: async (ctx, input, next, step) => {
      const reply = await next(input);
      const usage = usageOf(reply);
      if (usage) step.onUsage(usage);
      // A token quota counts reported usage only: a reply without it would pass the quota unseen.
      else if (quotas?.maxTokens !== undefined) meter.unmetered(ctx, quotas.maxTokens);
      return reply;
    },
  });
  if (retry) layers.push({ run: retryMiddleware(retry) });
  if (timeoutMs !== undefined) {
    layers.push({
      run: timeoutMiddleware((ctx: EffectContext) =>
        typeof timeoutMs === "number" ? timeoutMs : (timeoutMs[ctx.effectId] ?? timeoutMs["*"]),
      ),
    });
  }
  return layers;
}

/** Validates the `capabilities` group at boot (`createApp`), naming the option at fault. */
export function validateCapabilities(o: CapabilitiesOptions | undefined, effectIds: readonly string[]): void {
  if (o === undefined) return;
  const known = `registered effects: ${effectIds.length ? effectIds.join(", ") : "none"}`;
  if (o.grants !== undefined) {
    if (typeof o.grants !== "object" || o.grants === null || Array.isArray(o.grants)) {
      throw new ConfigError(
        "capabilities.grants",
        'an object { [logicId]: effectIds[] }, e.g. { researcher: ["search", "model"] }.',
      );
    }
    for (const [logicId, granted] of Object.entries(o.grants)) {
      const path = `capabilities.grants.${logicId}`;
      if (!Array.isArray(granted) || granted.some((id) => typeof id !== "string"))
        throw new ConfigError(path, "an array of effect ids.");
      const unknown = granted.find((id) => !effectIds.includes(id));
      if (unknown !== undefined)
        throw new ConfigError(path, `grants effect "${unknown}", which the config does not register (${known}).`);
    }
  }
  if (o.quotas !== undefined) {
    if (typeof o.quotas !== "object" || o.quotas === null)
      throw new ConfigError("capabilities.quotas", "an object { maxModelCalls?, maxTokens? }.");
    for (const [key, value] of Object.entries(o.quotas)) {
      if (key !== "maxModelCalls" && key !== "maxTokens")
        throw new ConfigError(`capabilities.quotas.${key}`, "unknown quota. Known quotas: maxModelCalls, maxTokens.");
      if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
        throw new ConfigError(`capabilities.quotas.${key}`, `a positive integer, got ${JSON.stringify(value)}.`);
    }
  }
  if (o.guardRequest !== undefined && typeof o.guardRequest !== "function") {
    throw new ConfigError(
      "capabilities.guardRequest",
      "a function (request, ctx) => undefined | request | { veto: reason }.",
    );
  }
  if (o.retry !== undefined) validateRetryOptions(o.retry, "capabilities.retry");
  const timeout = o.timeoutMs;
  if (timeout !== undefined) {
    const positive = (n: unknown) => typeof n === "number" && Number.isFinite(n) && n > 0;
    if (typeof timeout === "object" && timeout !== null) {
      for (const [id, ms] of Object.entries(timeout)) {
        const path = `capabilities.timeoutMs.${id}`;
        if (id !== "*" && !effectIds.includes(id))
          throw new ConfigError(
            path,
            `names effect "${id}", which the config does not register (${known}); use "*" for the rest.`,
          );
        if (!positive(ms)) throw new ConfigError(path, `a positive number of milliseconds, got ${JSON.stringify(ms)}.`);
      }
    } else if (!positive(timeout)) {
      throw new ConfigError(
        "capabilities.timeoutMs",
        `a positive number of milliseconds, or { [effectId]: ms }, got ${JSON.stringify(timeout)}.`,
      );
    }
  }
}
