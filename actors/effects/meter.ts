// Model usage per execution, derived from the journal, and the quotas the capability ring checks against
// it (actors/effects/capabilities.ts). Counted from the log, so a quota holds across a resume. A quota holds for a
// tree of executions (an agent and its sub-agents, issue 34): an execution without children is a tree of one.
import type { Usage } from "../../machines/helpers/messages.js";
import { LoomworkError } from "../../stores/errors.js";
import { EXECUTION_STARTED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import { usageOf as sharedUsageOf } from "../../stores/usage.js";
import type { RuntimeBus, Warning } from "../bus.js";
import { RUNTIME_ERROR_CODES, WARNING_CODES } from "../constants.js";

/**
 * Limits on model (llm) calls, per tree of executions: an execution and its child executions (sub-agents, handoffs)
 * at any depth share one budget, so a runaway sub-agent is stopped by its root's. A single agent is a tree of one.
 */
export interface QuotaOptions {
  /** Model calls a tree may make (a call that reached the model counts, completed or failed). */
  maxModelCalls?: number;
  /** Tokens (input + output, from each reply's usage) after which no further model call of the tree is made. */
  maxTokens?: number;
}

/** Where a refused model call was: the step, and the tree whose budget it would pass. */
export interface QuotaRefusalSite {
  stepId?: string;
  /** The tree's root, when the execution is part of a tree of several. */
  rootId?: string;
}

/** An execution used up a quota (its tree's); the model was not called. */
export class QuotaExceededError extends LoomworkError {
  static override readonly name: string = "QuotaExceededError";
  readonly executionId: string;
  readonly quota: keyof QuotaOptions;
  readonly limit: number;
  readonly used: number;
  /** The model step refused. */
  readonly stepId: string | undefined;
  /** The root of the tree whose budget was used up, when the execution is part of a tree of several. */
  readonly rootId: string | undefined;
  constructor(
    executionId: string,
    quota: keyof QuotaOptions,
    limit: number,
    used: number,
    site: QuotaRefusalSite = {},
  ) {
    const where = site.stepId === undefined ? "" : ` (step "${site.stepId}")`;
    const whose = site.rootId === undefined ? "" : ` of its tree "${site.rootId}"`;
    super(
      RUNTIME_ERROR_CODES.quotaExceeded,
      `Execution "${executionId}"${where} reached capabilities.quotas.${quota}${whose} (${used} of ${limit}${quota === "maxTokens" ? " tokens" : " model calls"}); ` +
        `the model was not called. Raise the quota, or handle this error in the machine to end the run gracefully.`,
    );
    this.executionId = executionId;
    this.quota = quota;
    this.limit = limit;
    this.used = used;
    this.stepId = site.stepId;
    this.rootId = site.rootId;
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

/** The executions of a tree as the catalogue lists them (the root and its child executions at any depth). */
export type TreeMembers = (rootId: string) => Promise<readonly { executionId: string; status: string }[]>;

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
  /** The root of each child execution met (its EXECUTION_STARTED's `root`); a root is absent. */
  private readonly roots = new Map<string, string>();
  /** Roots known to have child executions: their quotas count the tree (the catalogue lists it at each check). */
  private readonly trees = new Set<string>();
  /** The final usage of a tree's ended child executions, kept while their root runs (an ended log never changes). */
  private readonly endedUsage = new Map<string, ExecutionUsage>();
  /** The quota check in progress per tree (they run one at a time). */
  private readonly admitting = new Map<string, Promise<void>>();
  private warnedUnmetered = false;

  /**
   * `warn`: the app's warning sink (actors/warnings.ts: the bus's "warn" event, then observability.onWarn).
   * `members`: the catalogue's listing of a tree, for quotas across it.
   */
  constructor(
    bus: RuntimeBus,
    private readonly readLog: (executionId: string) => Promise<JournalRecord[]>,
    private readonly isModel: (effectId: string) => boolean,
    private readonly warn: (warning: Warning) => void = () => undefined,
    private readonly members?: TreeMembers,
  ) {
    bus.on("append", ({ executionId, records }) => this.appended(executionId, records));
    // An ended execution's tally is let go: app.usage of it folds its journal again (nothing is held per ended run);
    // a child's is kept for its tree's quota until the root ends.
    bus.on("ended", ({ executionId }) => {
      this.reserved.delete(executionId);
      const tally = this.tallies.get(executionId);
      this.tallies.delete(executionId);
      const root = this.roots.get(executionId);
      if (root !== undefined) {
        // A child's final usage is kept while its root runs here; a root run elsewhere (a fleet) lists it again.
        if (tally && this.tallies.has(root)) this.endedUsage.set(executionId, tally.usage);
        else this.forget(executionId, root);
      } else if (this.trees.delete(executionId)) {
        for (const [id, of] of this.roots) if (of === executionId) this.forget(id, of);
      }
    });
  }

  // Lets go of a child execution of a tree, and of the tree once none of its children is left here.
  private forget(executionId: string, root: string): void {
    this.roots.delete(executionId);
    this.endedUsage.delete(executionId);
    if (!this.tallies.has(root) && ![...this.roots.values()].includes(root)) this.trees.delete(root);
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
    const own = await this.tally(executionId);
    const rootId = this.roots.get(executionId);
    const tree = rootId ?? executionId;
    if (!this.members || !this.trees.has(tree)) return this.check(executionId, stepId, quotas, own.usage, rootId);
    // The checks of one tree run one at a time, so that two sub-agents' calls cannot pass the budget together.
    const before = this.admitting.get(tree) ?? Promise.resolve();
    const turn = before.then(() => this.check(executionId, stepId, quotas, own.usage, rootId));
    const settled = turn.catch(() => undefined);
    this.admitting.set(tree, settled);
    void settled.then(() => {
      if (this.admitting.get(tree) === settled) this.admitting.delete(tree);
    });
    return turn;
  }

  private async check(
    executionId: string,
    stepId: string,
    quotas: QuotaOptions,
    own: ExecutionUsage,
    rootId: string | undefined,
  ): Promise<void> {
    // A tree of one is counted at once (no await between the check and the reservation); a tree is listed.
    const tree = rootId ?? executionId;
    const { usage, inFlight } =
      this.members && this.trees.has(tree)
        ? await this.treeUsage(this.members, tree, executionId, own)
        : { usage: own, inFlight: this.reserved.get(executionId)?.size ?? 0 };
    const reserved = this.reserved.get(executionId) ?? new Set<string>();
    const pending = inFlight - (reserved.has(stepId) ? 1 : 0);
    const site = { stepId, ...(this.trees.has(tree) ? { rootId: tree } : {}) };
    if (quotas.maxModelCalls !== undefined && usage.modelCalls + pending >= quotas.maxModelCalls) {
      throw new QuotaExceededError(
        executionId,
        "maxModelCalls",
        quotas.maxModelCalls,
        usage.modelCalls + pending,
        site,
      );
    }
    if (quotas.maxTokens !== undefined && usage.totalTokens >= quotas.maxTokens) {
      throw new QuotaExceededError(executionId, "maxTokens", quotas.maxTokens, usage.totalTokens, site);
    }
    reserved.add(stepId);
    this.reserved.set(executionId, reserved);
  }

  /**
   * The usage of the tree `rootId` (known to have child executions) and its model calls in flight, listed from the
   * catalogue at each check (children may run in other apps of a fleet): each member's live tally here, its final
   * usage once ended, else its log.
   */
  private async treeUsage(
    members: TreeMembers,
    rootId: string,
    executionId: string,
    own: ExecutionUsage,
  ): Promise<{ usage: ExecutionUsage; inFlight: number }> {
    const total = emptyUsage();
    let inFlight = 0;
    for (const member of await members(rootId)) {
      const id = member.executionId;
      inFlight += this.reserved.get(id)?.size ?? 0;
      let usage = id === executionId ? own : (this.tallies.get(id)?.usage ?? this.endedUsage.get(id));
      if (!usage) {
        const folded: Tally = { usage: emptyUsage(), through: 0 };
        this.fold(folded, await this.readLog(id));
        usage = folded.usage;
        // Kept while the root runs here (an ended log never changes); else read again at the next check.
        if (member.status !== "running" && id !== rootId && this.tallies.has(rootId)) {
          this.roots.set(id, rootId);
          this.endedUsage.set(id, usage);
        }
      }
      total.modelCalls += usage.modelCalls;
      total.inputTokens += usage.inputTokens;
      total.outputTokens += usage.outputTokens;
      total.totalTokens += usage.totalTokens;
    }
    return { usage: total, inFlight };
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
          this.learnRoot(executionId, records);
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
    this.learnRoot(executionId, records);
    const reserved = this.reserved.get(executionId);
    if (reserved)
      for (const record of records)
        if ("stepId" in record && typeof record.stepId === "string") reserved.delete(record.stepId);
    const tally = this.tallies.get(executionId);
    if (tally) this.fold(tally, records);
    else this.buffered.get(executionId)?.push(...records);
  }

  // A child execution's start names its root: the root's quotas now count its tree.
  private learnRoot(executionId: string, records: readonly JournalRecord[]): void {
    const start = records[0];
    if (start?.type !== EXECUTION_STARTED || typeof start.root !== "string" || start.root === executionId) return;
    this.roots.set(executionId, start.root);
    this.trees.add(start.root);
  }

  private fold(tally: Tally, records: JournalRecord[]): void {
    for (const record of records) {
      if (record.seq <= tally.through) continue;
      foldUsage(tally.usage, record, this.isModel);
      tally.through = record.seq;
    }
  }
}
