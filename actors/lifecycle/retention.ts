// Archive segments and retention. `archive(app, executionId)` moves old records out of the live log into a segment
// (which pins every blob it cites); by default through the latest snapshot, so a resume, which starts
// from the snapshot, never needs an archived record. `app.deleteHistory` is retention: the whole history
// goes, and the blobs only it cited become reclaimable by the next sweep.
import type { ExecutionInfo } from "../../stores/types.js";
import { ConfigError, UnknownExecutionError } from "../errors.js";
import { persistState, restoreState } from "../journal/planner.js";
import { foldRecords } from "../journal/replay.js";
import type { LifecycleHost } from "./host.js";

export { HistoryInUseError } from "./errors.js";

/** Options of `archive(app, executionId, options)`. */
export interface ArchiveOptions {
  /** Archive the live records with `seq <= throughSeq`. @defaultValue the latest snapshot's seq (one is taken first if needed) */
  throughSeq?: number;
}

/** What `archive(app, executionId)` moved: the new segment's bounds, or nothing when the live log had nothing to move. */
export interface ArchiveResult {
  executionId: string;
  /** The new segment, or undefined when there was nothing to archive. */
  segment?: { fromSeq: number; toSeq: number };
  /** The snapshot the default bound came from. */
  snapshotSeq?: number;
}

/** What archiving uses of the lifecycle host. */
type RetentionHost = Pick<LifecycleHost, "journal" | "effectIds" | "clock" | "logicOf" | "log">;

/**
 * Folds the journal into the state at its head, purely (the planner, no effect runs), and stores it as
 * a snapshot (sealed like the records when the subject's are). Resolves the snapshot's seq.
 */
async function snapshotAtHead(host: RetentionHost, info: ExecutionInfo): Promise<number> {
  const { executionId } = info;
  const machine = host.logicOf(info.logicId);
  if (!machine) {
    throw new ConfigError(
      "logics",
      `archiving execution "${executionId}" needs a snapshot, and its logic "${info.logicId}" is unknown to this app: list it in defineConfig({ logics: [...] }) or pass throughSeq.`,
    );
  }
  const journal = host.journal;
  const stored = await journal.getSnapshot(executionId);
  const from = { state: stored ? restoreState(machine, stored.state) : undefined, seq: stored?.seq ?? 0 };
  const opened = (await host.log(executionId)).filter((r) => r.seq > from.seq);
  // The fold recovery uses: a stopped EXECUTION_ENDED ends the state as stopped, as a resume sees it.
  const { state, seq } = foldRecords({ machine, executionId, effectIds: host.effectIds }, from, opened);
  if (!state) throw new UnknownExecutionError(executionId);
  await journal.putSnapshot(
    executionId,
    { seq, at: host.clock.now(), state: persistState(machine, state) },
    info.subject,
  );
  return seq;
}

/** Moves the execution's old live records into an archive segment. */
export async function archiveExecution(
  host: RetentionHost,
  executionId: string,
  options: ArchiveOptions = {},
): Promise<ArchiveResult> {
  const events = host.journal.events;
  const info = await events.getExecution(executionId);
  if (!info) throw new UnknownExecutionError(executionId);
  const archivedThrough = (await events.readArchives(executionId)).at(-1)?.toSeq ?? 0;
  let throughSeq = options.throughSeq;
  let snapshotSeq: number | undefined;
  if (throughSeq === undefined) {
    const snapshot = await events.getSnapshot(executionId);
    snapshotSeq = snapshot && snapshot.seq > archivedThrough ? snapshot.seq : await snapshotAtHead(host, info);
    throughSeq = snapshotSeq;
  } else if (!Number.isInteger(throughSeq) || throughSeq < 1 || throughSeq > info.head) {
    throw new ConfigError(
      "archive.throughSeq",
      `a seq between 1 and the head (${info.head}) of execution "${executionId}".`,
    );
  }
  if (throughSeq <= archivedThrough) return { executionId, ...(snapshotSeq === undefined ? {} : { snapshotSeq }) };
  await events.archive(executionId, throughSeq);
  return {
    executionId,
    segment: { fromSeq: archivedThrough + 1, toSeq: throughSeq },
    ...(snapshotSeq === undefined ? {} : { snapshotSeq }),
  };
}
