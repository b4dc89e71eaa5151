// Retention (issue 37): `applyRetention(app)` removes the ended executions past their retention period, as a journaled
// `loom.retention:<n>` execution of the retention coordinator (machines/retention.ts). Its two internal effects:
// - select: the next batch of executions past their period, each with the summary it leaves behind, journaled (the
//   coordinator's log holds what each keeps before anything is removed);
// - remove: for each, its history goes (log, snapshots, archive segments, catalogue entry: `deleteHistory`); kept as a
//   summary, a two-record log is written in its place (its start without the input, its end with the summary as the
//   output). Idempotent: a crash between the two writes the summary on the re-run; a summary already there is kept.
// A tree is retained together: a child execution goes only once its root has ended and is past its period (by the
// root's logic's rule). A subject whose erasure is under way is left to the erasure. The blobs only the removed
// histories cited become reclaimable by the next `sweep(app)`.
import {
  RETENTION_EFFECTS,
  RETENTION_LOGIC_ID,
  retentionMachine,
  type RetentionInput,
  type RetentionRemoval,
  type RetentionResult,
  type RetentionRule,
  type RetentionSelection,
  type RetentionSummary,
} from "../../machines/retention.js";
import { ERASE_COORDINATOR_LOGIC_ID } from "../../machines/helpers/maintenanceIds.js";
import { EVENT_SCHEMA, EXECUTION_ENDED, EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import type { ExecutionInfo, JournalRecord, StoredRecord } from "../../stores/types.js";
import { usageOf } from "../../stores/usage.js";
import { checkRetentionRule, type RetentionConfig } from "../config.js";
import { eraseCoordinatorPrefix } from "../constants.js";
import { ConfigError } from "../errors.js";
import { isInternalLogic, type InternalEffect, type InternalEffectContext, type LifecycleHost } from "./host.js";

export type { RetentionResult, RetentionRule, RetentionSummary } from "../../machines/retention.js";

/** The output an execution kept as a summary ends with: what `app.result` of it returns. */
export interface RetainedSummaryOutput {
  retained: "summary";
  usage?: RetentionSummary["usage"];
  error?: RetentionSummary["error"];
}

/** Options of `applyRetention(app, options)`: the rules (else the app's `retention` config) and the batch size. */
export interface RetentionOptions extends RetentionConfig {
  /** Executions removed per journaled batch. @defaultValue 200 */
  batchSize?: number;
}

const RETENTION_ID_PREFIX = `${RETENTION_LOGIC_ID}:`;
const DEFAULT_BATCH = 200;

/** The coordinator's rules from `options`, checked: a default rule and rules by logic. */
export function retentionRules(options: RetentionOptions): RetentionInput["rules"] {
  if (typeof options !== "object" || options === null)
    throw new ConfigError("retention", "an object { keepFor, keep?, logics? }.");
  const rules: RetentionInput["rules"] = { byLogic: {} };
  if (options.keepFor !== undefined || options.keep !== undefined) {
    const rule: unknown = { keepFor: options.keepFor, keep: options.keep ?? "summary" };
    checkRetentionRule(rule, "retention");
    rules.default = rule;
  }
  if (options.logics !== undefined) {
    if (typeof options.logics !== "object" || options.logics === null)
      throw new ConfigError("retention.logics", "an object of rules by logic id.");
    for (const [logicId, rule] of Object.entries(options.logics)) {
      checkRetentionRule(rule, `retention.logics.${logicId}`);
      rules.byLogic[logicId] = { keepFor: rule.keepFor, keep: rule.keep ?? "summary" };
    }
  }
  if (!rules.default && Object.keys(rules.byLogic).length === 0)
    throw new ConfigError("retention", "give a keepFor (and keep), or rules by logic in logics.");
  return rules;
}

/** Runs the retention coordinator: an unfinished one (a crash mid-way) is finished first and its result returned. */
export async function retainOnce(host: LifecycleHost, options: RetentionOptions): Promise<RetentionResult> {
  const rules = retentionRules(options);
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new ConfigError("retention.batchSize", `a positive integer, got ${JSON.stringify(batchSize)}.`);
  const runs = (await host.events.listExecutions()).filter((info) => info.logicId === RETENTION_LOGIC_ID);
  await repairFailed(host, runs);
  const unfinished = runs.find((info) => info.status === "running");
  if (unfinished) {
    await host.resume(unfinished.executionId, retentionMachine);
    return resultOf(await host.result(unfinished.executionId));
  }
  const numbers = runs.map((info) => Number(info.executionId.slice(RETENTION_ID_PREFIX.length)) || 0);
  const retentionId = `${RETENTION_ID_PREFIX}${Math.max(0, ...numbers) + 1}`;
  const input: RetentionInput = { retentionId, rules, batchSize };
  await host.start(retentionMachine, { executionId: retentionId, input });
  return resultOf(await host.result(retentionId));
}

/**
 * A coordinator that failed (a store error mid-removal) may have deleted a history whose summary it did not write:
 * its selected batches without a removal are removed again (idempotent), so no summary is lost. Run before any other.
 */
async function repairFailed(host: LifecycleHost, runs: readonly ExecutionInfo[]): Promise<void> {
  for (const run of runs) {
    if (run.status !== "error") continue;
    const log = await host.events.read(run.executionId);
    const removed = new Set(
      log.flatMap((r) =>
        r.type === STEP_COMPLETED && String(r.stepId).includes("#remove:")
          ? [String(r.stepId).split("#remove:")[1]]
          : [],
      ),
    );
    for (const record of log) {
      if (record.type !== STEP_COMPLETED || !String(record.stepId).includes("#select:")) continue;
      const round = String(record.stepId).split("#select:")[1];
      const batch =
        typeof record.output === "object" && record.output !== null ? Reflect.get(record.output, "batch") : [];
      if (removed.has(round) || !Array.isArray(batch)) continue;
      await removeBatch(host, batch);
    }
  }
}

// The coordinator's output (its machine's `output`), read back from `host.result`.
function resultOf(output: unknown): RetentionResult {
  const field = (key: string): unknown =>
    typeof output === "object" && output !== null ? Reflect.get(output, key) : undefined;
  const count = (key: string) => {
    const value = field(key);
    return typeof value === "number" ? value : 0;
  };
  return {
    retentionId: String(field("retentionId")),
    batches: count("batches"),
    removed: count("removed"),
    summarized: count("summarized"),
  };
}

// A log that is already a summary: two records, the end's output marked.
function isSummaryLog(log: readonly StoredRecord[]): boolean {
  const ended = log[1];
  return (
    log.length === 2 &&
    ended?.type === EXECUTION_ENDED &&
    typeof ended.output === "object" &&
    ended.output !== null &&
    "retained" in ended.output
  );
}

async function select(
  input: Omit<RetentionInput, "retentionId">,
  ctx: InternalEffectContext,
): Promise<RetentionSelection> {
  const { host } = ctx;
  const at = host.clock.now();
  const all = await host.events.listExecutions();
  const byId = new Map(all.map((info) => [info.executionId, info]));
  // An erasure under way takes the subject's executions first.
  const erasures = all
    .filter((info) => info.logicId === ERASE_COORDINATOR_LOGIC_ID && info.status === "running")
    .map((info) => info.executionId);
  const erasing = (subject: string) => erasures.some((id) => id.startsWith(eraseCoordinatorPrefix(subject)));
  const due = (info: ExecutionInfo): RetentionRule | undefined => {
    if (info.status === "running" || info.endedAt === undefined || info.damaged || isInternalLogic(info.logicId))
      return;
    if (info.subject !== undefined && erasing(info.subject)) return;
    const root = info.rootId === undefined ? info : byId.get(info.rootId);
    if (!root || root.status === "running" || root.endedAt === undefined) return;
    const rule = (root.logicId !== undefined ? input.rules.byLogic[root.logicId] : undefined) ?? input.rules.default;
    return rule && root.endedAt + rule.keepFor <= at && info.endedAt + rule.keepFor <= at ? rule : undefined;
  };
  const batch: RetentionSummary[] = [];
  for (const info of [...all].sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0))) {
    if (batch.length >= input.batchSize) break;
    const rule = due(info);
    if (!rule) continue;
    // A summary is kept as it is under a summary rule; a rule of nothing removes it too.
    const raw = info.head <= 2 && rule.keep !== "nothing" ? await host.events.read(info.executionId) : undefined;
    if (raw && isSummaryLog(raw)) continue;
    batch.push(await summaryOf(host, info, rule));
  }
  return { at, batch };
}

// What an execution leaves behind: read from its start and end records and its model steps' usage.
async function summaryOf(host: LifecycleHost, info: ExecutionInfo, rule: RetentionRule): Promise<RetentionSummary> {
  let log: JournalRecord[] | undefined;
  try {
    log = await host.log(info.executionId);
  } catch {
    log = undefined; // an erased subject's records cannot be opened: its summary has no usage
  }
  let usage: RetentionSummary["usage"];
  let parent: RetentionSummary["parent"];
  let error: unknown;
  if (log) {
    usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    for (const record of log) {
      if (record.type === EXECUTION_STARTED && record.parent)
        parent = {
          executionId: record.parent.executionId,
          childId: record.parent.childId,
          stepId: record.parent.stepId,
        };
      if (record.type === EXECUTION_ENDED) error = record.error;
      const tokens = record.type === STEP_COMPLETED ? usageOf(record) : undefined;
      if (!tokens) continue;
      usage.modelCalls++;
      usage.inputTokens += tokens.inputTokens;
      usage.outputTokens += tokens.outputTokens;
      usage.totalTokens += tokens.inputTokens + tokens.outputTokens;
    }
  }
  const errorName = typeof error === "object" && error !== null ? Reflect.get(error, "name") : undefined;
  const errorCode = typeof error === "object" && error !== null ? Reflect.get(error, "code") : undefined;
  return {
    executionId: info.executionId,
    keep: rule.keep ?? "summary",
    ...(info.logicId === undefined ? {} : { logicId: info.logicId }),
    ...(info.machineHash === undefined ? {} : { machineHash: info.machineHash }),
    ...(info.version === undefined ? {} : { version: info.version }),
    ...(info.subject === undefined ? {} : { subject: info.subject }),
    ...(parent === undefined ? {} : { parent }),
    ...(info.rootId === undefined ? {} : { root: info.rootId }),
    status: info.status,
    startedAt: info.startedAt,
    endedAt: info.endedAt ?? info.startedAt,
    ...(usage === undefined ? {} : { usage }),
    ...(typeof errorName === "string"
      ? { error: { name: errorName, ...(typeof errorCode === "string" ? { code: errorCode } : {}) } }
      : {}),
  };
}

function remove(input: { batch: RetentionSummary[] }, ctx: InternalEffectContext): Promise<RetentionRemoval> {
  return removeBatch(ctx.host, input.batch);
}

async function removeBatch(host: LifecycleHost, batch: readonly RetentionSummary[]): Promise<RetentionRemoval> {
  let removed = 0;
  let summarized = 0;
  for (const summary of batch) {
    const id = summary.executionId;
    const info = await host.events.getExecution(id);
    if (summary.keep === "nothing") {
      if (info) await host.deleteHistory(id);
      removed++;
      continue;
    }
    if (info && isSummaryLog(await host.events.read(id))) {
      summarized++;
      continue;
    }
    if (info) await host.deleteHistory(id);
    // Written unsealed: a summary holds no content, and an erased subject's key is gone.
    await host.events.append(id, 0, summaryRecords(summary));
    summarized++;
  }
  return { removed, summarized };
}

/** The two records of a summary: its start without the input, its end with the summary as its output. */
function summaryRecords(summary: RetentionSummary): StoredRecord[] {
  const output: RetainedSummaryOutput = {
    retained: "summary",
    ...(summary.usage ? { usage: summary.usage } : {}),
    ...(summary.error ? { error: summary.error } : {}),
  };
  return [
    {
      seq: 1,
      at: summary.startedAt,
      type: EXECUTION_STARTED,
      logicId: summary.logicId ?? "",
      machineHash: summary.machineHash ?? "",
      ...(summary.version === undefined ? {} : { version: summary.version }),
      ...(summary.subject === undefined ? {} : { subject: summary.subject }),
      input: null,
      schema: EVENT_SCHEMA.version,
      ...(summary.parent === undefined ? {} : { parent: summary.parent }),
      ...(summary.root === undefined ? {} : { root: summary.root }),
    },
    {
      seq: 2,
      at: summary.endedAt,
      type: EXECUTION_ENDED,
      status: summary.status === "running" ? "stopped" : summary.status,
      output,
    },
  ];
}

/** The coordinator's internal effects, by id (actors/lifecycle/internalEffects.ts). */
export const retentionEffects: Record<string, InternalEffect> = {
  [RETENTION_EFFECTS.select]: { run: select },
  [RETENTION_EFFECTS.remove]: { run: remove },
};
