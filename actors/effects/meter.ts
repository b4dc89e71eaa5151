// Model usage per execution, derived from the journal, and the quotas the capability ring checks against
// it (actors/effects/capabilities.ts). Counted from the log, so a quota holds across a resume.
import type { Usage } from "../../machines/helpers/messages.js";
import { LoomworkError } from "../../stores/errors.js";
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import { usageOf as sharedUsageOf } from "../../stores/usage.js";
import type { RuntimeBus, Warning } from "../bus.js";
import { RUNTIME_ERROR_CODES, WARNING_CODES } from "../constants.js";

/** Per-execution limits on model (llm) calls. */
export interface QuotaOptions {
  /** Model calls an execution may make (a call that reached the model counts, completed or failed). */
  maxModelCalls?: number;
  /** Tokens (input + output, from each reply's usage) after which no further model call is made. */
  maxTokens?: number;
}

/** An execution used up a quota; the model was not called. */
export class QuotaExceededError extends LoomworkError {
  static override readonly name: string = "QuotaExceededError";
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

/** Model usage summed over an execution: `app.usage(id)`, the read model, and what quotas count. */
export interface ExecutionUsage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** `app.usage` of an execution with child executions: the tree's totals, and each execution's own (issue 34). */
export interface TreeUsage extends ExecutionUsage {
  /** Each execution of the tree (the one asked for and its child executions at any depth), by id; absent: no children. */
  byExecution?: Record<string, ExecutionUsage>;
}

export function emptyUsage(): ExecutionUsage {
  return { modelCalls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}

/** A reply's usage when it is well-formed (two non-negative numbers), else undefined. */
export const usageOf: (reply: unknown) => Usage | undefined = sharedUsageOf;

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
  private warnedUnmetered = false;

  /** `warn`: the app's warning sink (actors/warnings.ts: the bus's "warn" event, then observability.onWarn). */
  constructor(
    bus: RuntimeBus,
    private readonly readLog: (executionId: string) => Promise<JournalRecord[]>,
    private readonly isModel: (effectId: string) => boolean,
    private readonly warn: (warning: Warning) => void = () => undefined,
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

  /**
   * A model reply came back without usage while `quotas.maxTokens` is set: it meters 0 tokens, so the quota
   * cannot refuse on its account. Said once per app (a provider that omits usage omits it on every reply).
   */
  unmetered(call: { executionId: string; stepId: string; effectId: string }, maxTokens: number): void {
    if (this.warnedUnmetered) return;
    this.warnedUnmetered = true;
    this.warn({
      code: WARNING_CODES.modelUsageMissing,
      executionId: call.executionId,
      stepId: call.stepId,
      effectId: call.effectId,
      maxTokens,
      message:
        `Effect "${call.effectId}" (execution "${call.executionId}", step "${call.stepId}") returned a reply without usage, so it counts 0 tokens ` +
        `against capabilities.quotas.maxTokens (${maxTokens}), which cannot refuse a call on its account. Turn usage on in the provider: the AI SDK's ` +
        `OpenAI-compatible providers report it when streaming only with createOpenAICompatible({ ..., includeUsage: true }) (or use ` +
        `fromAiSdk(model, { stream: false })); a Model of your own returns usage: { inputTokens, outputTokens } (docs/agents.md, "Metering"). ` +
        `Reported once per app.`,
    });
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
    if (reserved)
      for (const record of records)
        if ("stepId" in record && typeof record.stepId === "string") reserved.delete(record.stepId);
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
