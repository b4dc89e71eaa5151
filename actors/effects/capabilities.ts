// The capability ring: middleware the app installs from `capabilities` (grants, quotas, guardRequest,
// metering, retry, timeout). It sits inside secret redaction and outside every user middleware
// (machines/effectChain.ts). Quotas count from the journal, so they hold across a resume.
import type { ModelRequest, Usage } from "../../machines/helpers/messages.js";
import { LoomworkError } from "../../stores/errors.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import type { RuntimeBus } from "../bus.js";
import type { EffectContext, EffectMiddleware } from "./effect.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { ConfigError } from "../errors.js";
import { retryMiddleware, timeoutMiddleware, validateRetryOptions, type RetryOptions } from "./retry.js";

/** Per-execution limits on model (llm) calls. */
export interface QuotaOptions {
  /** Model calls an execution may make (a call that reached the model counts, completed or failed). */
  maxModelCalls?: number;
  /** Tokens (input + output, from each reply's usage) after which no further model call is made. */
  maxTokens?: number;
}

/** What `guardRequest` returns: nothing (send as is), a rewritten request, or a veto. */
export type GuardVerdict = ModelRequest | { veto: string } | undefined | void;

/** The `capabilities` group: grants, quotas, guardRequest, retry and timeouts. */
export interface CapabilitiesOptions {
  /**
   * Which effects each logic (by machine id) may call; `"*"` applies to logics not listed. A logic
   * with no entry (and no `"*"`) is not restricted. A call outside its grant fails with `GrantDeniedError`.
   * @example grants: { researcher: ["search", "model"], "*": [] }
   */
  grants?: Record<string, string[]>;
  /** Per-execution limits on model calls; a call past them fails with `QuotaExceededError`. */
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

/** A logic called an effect its grant does not list. */
export class GrantDeniedError extends LoomworkError {
  readonly logicId: string;
  readonly effectId: string;
  constructor(logicId: string, effectId: string, granted: readonly string[], grantKey: string) {
    super(
      RUNTIME_ERROR_CODES.grantDenied,
      `Logic "${logicId}" may not call effect "${effectId}": capabilities.grants["${grantKey}"] grants ` +
        `${granted.length ? granted.join(", ") : "no effect"}. Add "${effectId}" to it if the call is intended.`,
    );
    this.logicId = logicId;
    this.effectId = effectId;
  }
}

/** An execution used up a quota; the model was not called. */
export class QuotaExceededError extends LoomworkError {
  readonly executionId: string;
  readonly quota: keyof QuotaOptions;
  readonly limit: number;
  readonly used: number;
  constructor(executionId: string, quota: keyof QuotaOptions, limit: number, used: number) {
    super(
      RUNTIME_ERROR_CODES.quotaExceeded,
      `Execution "${executionId}" reached capabilities.quotas.${quota} (${used} of ${limit}${quota === "maxTokens" ? " tokens" : " model calls"}); ` +
        `the model was not called. Raise the quota, or handle this error in the machine to end the run gracefully.`,
    );
    this.executionId = executionId;
    this.quota = quota;
    this.limit = limit;
    this.used = used;
  }
}

/** `capabilities.guardRequest` vetoed a model request (or threw); the model was not called. */
export class GuardRefusedError extends LoomworkError {
  readonly stepId: string;
  readonly reason: string;
  constructor(stepId: string, reason: string) {
    super(RUNTIME_ERROR_CODES.guardRefused, `capabilities.guardRequest refused the model request of step "${stepId}": ${reason}.`);
    this.stepId = stepId;
    this.reason = reason;
  }
}

/** Model usage summed over an execution: `app.usage(id)`, the read model, and what quotas count. */
export interface ExecutionUsage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export function emptyUsage(): ExecutionUsage {
  return { modelCalls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}

/** A reply's usage when it is well-formed (two non-negative numbers), else undefined. */
export function usageOf(reply: unknown): Usage | undefined {
  const usage = (reply as { usage?: Partial<Usage> } | null | undefined)?.usage;
  if (!usage || typeof usage !== "object") return undefined;
  const { inputTokens, outputTokens } = usage;
  const ok = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;
  return ok(inputTokens) && ok(outputTokens) ? { inputTokens, outputTokens } : undefined;
}

/**
 * Adds one journal record to `usage` (in place): a model step that completed, or failed in the
 * effect itself, is a model call; STEP_COMPLETED.usage carries its tokens.
 */
export function foldUsage(usage: ExecutionUsage, record: JournalRecord, isModel: (effectId: string) => boolean): void {
  if (record.type !== STEP_COMPLETED && record.type !== STEP_FAILED) return;
  if (!isModel(String(record.effectId))) return;
  if (record.type === STEP_FAILED && record.stoppedAt !== "effect") return;
  usage.modelCalls++;
  const tokens = usageOf(record);
  if (tokens) {
    usage.inputTokens += tokens.inputTokens;
    usage.outputTokens += tokens.outputTokens;
    usage.totalTokens += tokens.inputTokens + tokens.outputTokens;
  }
}

interface Tally {
  usage: ExecutionUsage;
  through: number;
}

/**
 * Per-execution model usage, derived from the journal: loaded from the log on first need (so a
 * resumed execution's quota counts what it used before), then kept current from the bus's appends.
 */
export class Meter {
  private readonly tallies = new Map<string, Tally>();
  private readonly loading = new Map<string, Promise<Tally>>();
  private readonly buffered = new Map<string, JournalRecord[]>();
  /** Model steps that passed the quota and have no journaled outcome yet. */
  private readonly reserved = new Map<string, Set<string>>();

  constructor(
    bus: RuntimeBus,
    private readonly readLog: (executionId: string) => Promise<JournalRecord[]>,
    private readonly isModel: (effectId: string) => boolean,
  ) {
    bus.on("append", ({ executionId, records }) => this.appended(executionId, records));
    // An ended execution's tally is let go: app.usage of it folds its journal again (nothing is held per ended run).
    bus.on("ended", ({ executionId }) => {
      this.reserved.delete(executionId);
      this.tallies.delete(executionId);
    });
  }

  /** The execution's usage so far (journaled outcomes only). */
  async usage(executionId: string): Promise<ExecutionUsage> {
    return { ...(await this.tally(executionId)).usage };
  }

  /**
   * Refuses the model call of `stepId` if it would pass a quota, else reserves it until its outcome is
   * journaled (so concurrent model steps of one execution cannot overshoot `maxModelCalls` together).
   */
  async admit(executionId: string, stepId: string, quotas: QuotaOptions): Promise<void> {
    const { usage } = await this.tally(executionId);
    const reserved = this.reserved.get(executionId) ?? new Set<string>();
    const inFlight = reserved.size - (reserved.has(stepId) ? 1 : 0);
    if (quotas.maxModelCalls !== undefined && usage.modelCalls + inFlight >= quotas.maxModelCalls) {
      throw new QuotaExceededError(executionId, "maxModelCalls", quotas.maxModelCalls, usage.modelCalls + inFlight);
    }
    if (quotas.maxTokens !== undefined && usage.totalTokens >= quotas.maxTokens) {
      throw new QuotaExceededError(executionId, "maxTokens", quotas.maxTokens, usage.totalTokens);
    }
    reserved.add(stepId);
    this.reserved.set(executionId, reserved);
  }

  /** Drops a reservation whose outcome will never be journaled (the step was aborted). */
  release(executionId: string, stepId: string): void {
    this.reserved.get(executionId)?.delete(stepId);
  }

  private tally(executionId: string): Promise<Tally> {
    const known = this.tallies.get(executionId);
    if (known) return Promise.resolve(known);
    let loading = this.loading.get(executionId);
    if (!loading) {
      this.buffered.set(executionId, []);
      loading = this.readLog(executionId)
        .then((records) => {
          const tally: Tally = { usage: emptyUsage(), through: 0 };
          this.fold(tally, records);
          this.fold(tally, this.buffered.get(executionId) ?? []);
          this.tallies.set(executionId, tally);
          return tally;
        })
        .finally(() => {
          this.loading.delete(executionId);
          this.buffered.delete(executionId);
        });
      this.loading.set(executionId, loading);
    }
    return loading;
  }

  private appended(executionId: string, records: JournalRecord[]): void {
    const reserved = this.reserved.get(executionId);
    if (reserved) for (const record of records) if (typeof record.stepId === "string") reserved.delete(record.stepId);
    const tally = this.tallies.get(executionId);
    if (tally) this.fold(tally, records);
    else this.buffered.get(executionId)?.push(...records);
  }

  private fold(tally: Tally, records: JournalRecord[]): void {
    for (const record of records) {
      if (record.seq <= tally.through) continue;
      foldUsage(tally.usage, record, this.isModel);
      tally.through = record.seq;
    }
  }
}

/** What the ring needs to know about the call it guards. */
export interface RingContext {
  logicId: string;
  /** False for `invokeTransient`: no grants, quotas or metering (nothing is journaled), but the guard, retry and timeout apply. */
  journaled: boolean;
  isModel: boolean;
  meter: Meter;
  /** Receives the model usage of a completed call (recorded on STEP_COMPLETED). */
  onUsage(usage: Usage): void;
}

/** The ring's layers for one call, outside in: grants, quotas, guardRequest, metering, retry, timeout. */
export function capabilityRing(options: CapabilitiesOptions | undefined, call: RingContext): EffectMiddleware[] {
  const layers: EffectMiddleware[] = [];
  // Metering is always on (it only reads the reply); the rest is what `capabilities` configures.
  const { grants, quotas, guardRequest, retry, timeoutMs } = options ?? {};
  if (grants && call.journaled) {
    const key = grants[call.logicId] !== undefined ? call.logicId : grants["*"] !== undefined ? "*" : undefined;
    if (key !== undefined) {
      const granted = grants[key]!;
      layers.push((ctx, input, next) => {
        if (!granted.includes(ctx.effectId)) throw new GrantDeniedError(call.logicId, ctx.effectId, granted, key);
        return next(input);
      });
    }
  }
  if (quotas && call.journaled && call.isModel) {
    layers.push(async (ctx, input, next) => {
      await call.meter.admit(ctx.executionId, ctx.stepId, quotas);
      try {
        return await next(input);
      } finally {
        // An aborted step journals no outcome, so nothing would release its reservation.
        if (ctx.signal.aborted) call.meter.release(ctx.executionId, ctx.stepId);
      }
    });
  }
  if (guardRequest && call.isModel) {
    layers.push(async (ctx, input, next) => {
      let verdict: GuardVerdict;
      try {
        verdict = await guardRequest(input as ModelRequest, ctx);
      } catch (error) {
        if (error instanceof GuardRefusedError) throw error;
        throw new GuardRefusedError(ctx.stepId, error instanceof Error ? error.message : String(error));
      }
      if (verdict === undefined) return next(input);
      if (typeof verdict === "object" && verdict !== null && typeof (verdict as { veto?: unknown }).veto === "string") {
        throw new GuardRefusedError(ctx.stepId, (verdict as { veto: string }).veto);
      }
      if (typeof verdict === "object" && verdict !== null && Array.isArray((verdict as ModelRequest).messages)) return next(verdict);
      throw new TypeError(
        `capabilities.guardRequest returned ${JSON.stringify(verdict)} for step "${ctx.stepId}": return nothing, a ModelRequest, or { veto: reason }.`,
      );
    });
  }
  if (call.journaled && call.isModel) {
    layers.push(async (_ctx, input, next) => {
      const reply = await next(input);
      const usage = usageOf(reply);
      if (usage) call.onUsage(usage);
      return reply;
    });
  }
  if (retry) layers.push(retryMiddleware(retry));
  if (timeoutMs !== undefined) {
    layers.push(timeoutMiddleware((ctx: EffectContext) => (typeof timeoutMs === "number" ? timeoutMs : (timeoutMs[ctx.effectId] ?? timeoutMs["*"]))));
  }
  return layers;
}

/** Validates the `capabilities` group at boot (`createApp`), naming the option at fault. */
export function validateCapabilities(options: unknown, effectIds: readonly string[]): void {
  if (options === undefined) return;
  const o = options as CapabilitiesOptions;
  const known = `registered effects: ${effectIds.length ? effectIds.join(", ") : "none"}`;
  if (o.grants !== undefined) {
    if (typeof o.grants !== "object" || o.grants === null || Array.isArray(o.grants)) {
      throw new ConfigError("capabilities.grants", 'an object { [logicId]: effectIds[] }, e.g. { researcher: ["search", "model"] }.');
    }
    for (const [logicId, granted] of Object.entries(o.grants)) {
      const path = `capabilities.grants.${logicId}`;
      if (!Array.isArray(granted) || granted.some((id) => typeof id !== "string")) throw new ConfigError(path, "an array of effect ids.");
      const unknown = granted.find((id) => !effectIds.includes(id));
      if (unknown !== undefined) throw new ConfigError(path, `grants effect "${unknown}", which the config does not register (${known}).`);
    }
  }
  if (o.quotas !== undefined) {
    if (typeof o.quotas !== "object" || o.quotas === null) throw new ConfigError("capabilities.quotas", "an object { maxModelCalls?, maxTokens? }.");
    for (const [key, value] of Object.entries(o.quotas)) {
      if (key !== "maxModelCalls" && key !== "maxTokens") throw new ConfigError(`capabilities.quotas.${key}`, "unknown quota. Known quotas: maxModelCalls, maxTokens.");
      if (!Number.isInteger(value) || (value as number) < 1) throw new ConfigError(`capabilities.quotas.${key}`, `a positive integer, got ${JSON.stringify(value)}.`);
    }
  }
  if (o.guardRequest !== undefined && typeof o.guardRequest !== "function") {
    throw new ConfigError("capabilities.guardRequest", "a function (request, ctx) => undefined | request | { veto: reason }.");
  }
  if (o.retry !== undefined) validateRetryOptions(o.retry, "capabilities.retry");
  const timeout = o.timeoutMs;
  if (timeout !== undefined) {
    const positive = (n: unknown) => typeof n === "number" && Number.isFinite(n) && n > 0;
    if (typeof timeout === "object" && timeout !== null) {
      for (const [id, ms] of Object.entries(timeout)) {
        const path = `capabilities.timeoutMs.${id}`;
        if (id !== "*" && !effectIds.includes(id)) throw new ConfigError(path, `names effect "${id}", which the config does not register (${known}); use "*" for the rest.`);
        if (!positive(ms)) throw new ConfigError(path, `a positive number of milliseconds, got ${JSON.stringify(ms)}.`);
      }
    } else if (!positive(timeout)) {
      throw new ConfigError("capabilities.timeoutMs", `a positive number of milliseconds, or { [effectId]: ms }, got ${JSON.stringify(timeout)}.`);
    }
  }
}
