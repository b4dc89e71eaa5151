// checkReplay(app, logic) (loomwork/upgrades): replays stored journals against a logic without running anything (the pure planner
// and the replay fold, no effect, no timer, no write), to gate a deploy on whether the executions in
// flight would resume on it. One execution's log is in memory at a time; each result goes to `onResult`
// as it is known, so a caller streaming them keeps memory bounded by one log.
import type { AppHost } from "../appHost.js";
import type { AnyStateMachine } from "xstate";
import { LoomworkError } from "../../stores/errors.js";
import type { ExecutionInfo } from "../../stores/types.js";
import { ConfigError, NonDeterminismError } from "../errors.js";
import { foldRecords } from "./replay.js";

/** Options of `checkReplay(app, logic, options)`. */
export interface ReplayCheckOptions {
  /** The executions to check; by default every stored execution of the logic's id. */
  executionIds?: readonly string[];
  /** Check at most this many (the first, in the store's order). */
  limit?: number;
  /** Called with each result as it is known. Given it, `report.results` keeps only the incompatible ones (bounded memory). */
  onResult?: (result: ReplayCheckResult) => void;
  /** Called after each execution: how many are checked of how many. */
  onProgress?: (progress: { checked: number; total: number }) => void;
}

/** One execution's verdict. `version`: the version it started on (`#<hash>` when it declared none). */
export type ReplayCheckResult =
  | { executionId: string; status: "compatible"; version?: string; records: number }
  | {
      executionId: string;
      status: "diverges";
      version?: string;
      /** The first seq at which the logic's replay differs from the journal. */
      seq: number;
      /** What the journal has there. */
      journal: unknown;
      /** What the logic produced there. */
      produced: unknown;
      /** "diverges at seq N: the journal has X, the logic produced Y". */
      message: string;
    }
  | { executionId: string; status: "unreadable"; version?: string; code?: string; message: string };

/** What `checkReplay(app, logic)` reports; `ok` is what a CI gate reads. */
export interface ReplayCheckReport {
  logicId: string;
  checked: number;
  compatible: number;
  diverged: number;
  unreadable: number;
  /** True when every checked execution is compatible. */
  ok: boolean;
  results: ReplayCheckResult[];
}

/** Replays the selected executions' journals against `logic`; see ReplayCheckOptions. */
export async function replayAgainst(
  host: AppHost,
  logic: AnyStateMachine,
  options: ReplayCheckOptions = {},
): Promise<ReplayCheckReport> {
  const { limit } = options;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
    throw new ConfigError("checkReplay.limit", `a non-negative integer; got ${String(limit)}.`);
  const ids =
    options.executionIds ??
    (await host.journal.events.listExecutions())
      .filter((info) => info.logicId === logic.id)
      .map((info) => info.executionId);
  const selected = limit === undefined ? ids : ids.slice(0, limit);
  const report: ReplayCheckReport = {
    logicId: logic.id,
    checked: 0,
    compatible: 0,
    diverged: 0,
    unreadable: 0,
    ok: true,
    results: [],
  };
  for (const executionId of selected) {
    const result = await checkOne(host, logic, executionId);
    report.checked++;
    if (result.status === "compatible") report.compatible++;
    else if (result.status === "diverges") report.diverged++;
    else report.unreadable++;
    if (result.status !== "compatible") report.ok = false;
    if (!options.onResult || result.status !== "compatible") report.results.push(result);
    options.onResult?.(result);
    options.onProgress?.({ checked: report.checked, total: selected.length });
  }
  return report;
}

async function checkOne(host: AppHost, logic: AnyStateMachine, executionId: string): Promise<ReplayCheckResult> {
  let info: ExecutionInfo | undefined;
  try {
    info = await host.journal.events.getExecution(executionId);
    if (!info)
      return { executionId, status: "unreadable", message: `execution "${executionId}" has no log in these stores` };
    const version = info.version ?? (info.machineHash === undefined ? undefined : `#${info.machineHash}`);
    const shown = version === undefined ? {} : { version };
    if (info.logicId !== undefined && info.logicId !== logic.id) {
      return diverges(executionId, shown, 1, `logic id "${info.logicId}"`, `logic id "${logic.id}"`);
    }
    // From seq 1: a snapshot is the old logic's fold, so the new logic is judged on every record.
    const records = await host.journal.readForReplay(executionId, 1);
    try {
      foldRecords({ machine: logic, executionId, effectIds: host.effectIds }, { state: undefined, seq: 0 }, records);
    } catch (error) {
      if (error instanceof NonDeterminismError)
        return diverges(executionId, shown, error.seq, error.expected, error.actual);
      throw error;
    }
    return { executionId, status: "compatible", ...shown, records: records.length };
  } catch (error) {
    const code = error instanceof LoomworkError ? { code: error.code } : {};
    return {
      executionId,
      status: "unreadable",
      ...code,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}

function diverges(
  executionId: string,
  shown: { version?: string },
  seq: number,
  journal: unknown,
  produced: unknown,
): ReplayCheckResult {
  const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
  const message = `diverges at seq ${seq}: the journal has ${text(journal)}, the logic produced ${text(produced)}`;
  return { executionId, status: "diverges", ...shown, seq, journal, produced, message };
}
