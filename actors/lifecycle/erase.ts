// Erasure (ADR 0140 D8 (b), D11 (3), D12): the internal effects of the eraseCoordinator machine and
// `eraseSubject(app, subject)`. The coordinator runs as a journaled execution `loom.erase:<subject>:<n>` with no
// subject of its own, so its log stays readable after the shred and a retry can finish from the intent.
//
// Its log, between macrosteps: ERASURE_CONTENT_DELETE_INTENDED { subject, addresses, touchCutoff }
// (before the shred) and ERASURE_CONTENT_DELETED { subject, intentSeq, deleted, retained } (after the
// deletes). The subject's own executions are never written to: sealed ones are crypto-shredded in place,
// the others (unsealed records: no security.crypto) are deleted whole by the shred step.
//
// A blob another execution's claim-check offloaded in this process and has not cited yet (its STEP_COMPLETED
// still to be appended) is never deleted: the plan drops what was in flight when it began, the delete step
// spares what is in flight when it runs or was reported since the plan began (actors/lifecycle/offloads.ts).
// Another process's offloads, and a coordinator resumed in another process, have the touch cutoff only.
import {
  ERASE_EFFECTS,
  eraseCoordinatorMachine,
  type ContentDeleted,
  type EraseCoordinatorOutput,
  type ErasePlan,
  type EraseSubjectResult,
} from "../../machines/eraseCoordinator.js";
import { forgetRecordKeys, isSealed } from "../../stores/recordSealing.js";
import {
  ERASURE_CONTENT_DELETE_INTENDED,
  ERASURE_CONTENT_DELETED,
  isJournalRecord,
  STEP_COMPLETED,
} from "../../stores/schema.js";
import type { ContentStore, EventStore, ExecutionInfo, StoredRecord } from "../../stores/types.js";
import { citesUnknown, claimCheckRefsOf, trustedClaimCheckRefsOf } from "./citations.js";
import { eraseCoordinatorId, eraseCoordinatorNumber, RUNTIME_ERROR_CODES } from "../constants.js";
import { ExecutionErasedError, isSealedState, SubjectCodec } from "../journal/sealing.js";
import { ConfigError } from "../errors.js";
import type { JournalCodec } from "../journal/journal.js";
import { coordinatorsOf } from "./erasureStatus.js";
import { inflightNow, inflightOutside, unwatchOffloads, watchedOffloads, watchOffloads } from "./offloads.js";
import { ContentCopiesRemainError, type ContentCopiesRemainReason } from "./errors.js";
import { isInternalLogic, type InternalEffect, type InternalEffectContext, type LifecycleHost } from "./host.js";

export type { ContentDeleted, EraseSubjectResult } from "../../machines/eraseCoordinator.js";
export { ErasureInProgressError } from "./erasureStatus.js";
export { ContentCopiesRemainError, type ContentCopiesRemainReason } from "./errors.js";

/** Throws ContentCopiesRemainError unless `content` can take erasure's conditional deletes. */
function requireErasable(
  subject: string,
  blobs: number,
  content: ContentStore | undefined,
): asserts content is ContentStore & Required<Pick<ContentStore, "deleteIfUntouchedSince" | "touchClock">> {
  if (!content) throw new ContentCopiesRemainError(subject, blobs, "not-wired");
  if (typeof content.delete !== "function") throw new ContentCopiesRemainError(subject, blobs, "cannot-delete");
  if (typeof content.deleteIfUntouchedSince !== "function" || typeof content.touchClock !== "function") {
    throw new ContentCopiesRemainError(subject, blobs, "no-conditional-delete");
  }
}

async function listOrRefuse(events: EventStore, subject: string): Promise<ExecutionInfo[]> {
  try {
    if (typeof events.listExecutions !== "function") throw new TypeError("no listExecutions");
    return await events.listExecutions();
  } catch {
    throw new ContentCopiesRemainError(subject, -1, "not-enumerable");
  }
}

/** An execution's whole history as stored: archived records, live records, snapshot. */
async function historyOf(events: EventStore, executionId: string) {
  const archived = (await events.readArchives(executionId)).flatMap((segment) => segment.records);
  const records = [...archived, ...(await events.read(executionId))];
  return { records, snapshot: await events.getSnapshot(executionId) };
}

/** Intents of earlier coordinators of the subject that journaled no result: their addresses still need deleting. */
async function unfinishedIntents(
  events: EventStore,
  infos: ExecutionInfo[],
  subject: string,
  self: string,
): Promise<string[]> {
  const addresses: string[] = [];
  for (const info of coordinatorsOf(infos, subject)) {
    if (info.executionId === self) continue;
    // A coordinator has no subject, so its log is never sealed: isJournalRecord narrows its records to the union.
    const log = (await events.read(info.executionId)).filter(isJournalRecord);
    const results = new Set(log.filter((r) => r.type === ERASURE_CONTENT_DELETED).map((r) => r.intentSeq));
    for (const intent of log)
      if (intent.type === ERASURE_CONTENT_DELETE_INTENDED && !results.has(intent.seq))
        addresses.push(...intent.addresses);
  }
  return addresses;
}

/**
 * The plan (before anything is destroyed): every address the subject's executions cite, anywhere, minus
 * those another non-erased execution still cites at the trusted position, minus those already gone.
 */
async function plan(subject: string, ctx: InternalEffectContext): Promise<ErasePlan> {
  const { events, codec, content, keyStores: keys, trust } = ctx.host;
  // The cutoff first: a blob put after this moment is spared by the conditional delete.
  const touchCutoff = typeof content?.touchClock === "function" ? await content.touchClock() : null;
  // Then, before any log is read, the offloads in flight (as the sweep's scan does): a blob put before the
  // cutoff whose citing append lands after the plan read that log would be taken for uncited (D8, D12).
  // Those reported from now on are recorded for the delete step (offloads.ts `watchOffloads`).
  watchOffloads(ctx.executionId);
  const inflightAtPlan = inflightNow();
  const alreadyErased = (await Promise.all(keys.map((k) => k.isDestroyed(subject)))).some(Boolean);
  const infos = await listOrRefuse(events, subject);
  const own = infos.filter((info) => info.subject === subject && !isInternalLogic(info.logicId));
  const candidates = new Set<string>(await unfinishedIntents(events, infos, subject, ctx.executionId));
  const deleteHistories: string[] = [];
  for (const { executionId } of own) {
    const { records, snapshot } = await historyOf(events, executionId);
    // The broad collection: the subject's own refs wherever they sit (sealed records list them readably).
    let cited = records;
    if (citesUnknown(records)) {
      if (!codec || alreadyErased) throw new ContentCopiesRemainError(subject, -1, "unknown-citations");
      cited = await codec.open(executionId, records);
    }
    for (const address of claimCheckRefsOf(cited)) candidates.add(address);
    if (snapshot) for (const address of claimCheckRefsOf(snapshot.state)) candidates.add(address);
    const sealedWhole = records.every(isSealed) && (!snapshot || isSealedState(snapshot.state));
    if (!sealedWhole) deleteHistories.push(executionId);
  }
  if (content && candidates.size > 0)
    for (const address of [...candidates]) if (!(await content.has(address))) candidates.delete(address);
  for (const info of infos) {
    if (candidates.size === 0) break;
    if (info.subject === subject || isInternalLogic(info.logicId)) continue;
    if (info.subject !== undefined && (await Promise.all(keys.map((k) => k.isDestroyed(info.subject!)))).some(Boolean))
      continue;
    const { records, snapshot } = await historyOf(events, info.executionId);
    let trusted: Set<string>;
    try {
      trusted = trustedClaimCheckRefsOf(await openTrustedCandidates(codec, info.executionId, records, candidates), {
        trust,
      });
    } catch (error) {
      if (error instanceof ExecutionErasedError) continue;
      throw error;
    }
    for (const address of trusted) candidates.delete(address);
    // A snapshot vouches only when no recorded STEP_COMPLETED is left to (history gone: fail closed).
    if (snapshot && !records.some((r) => r.type === STEP_COMPLETED))
      for (const address of claimCheckRefsOf(snapshot.state)) candidates.delete(address);
  }
  // Another execution's offload in flight when the plan began may be cited by an append it did not see.
  for (const address of inflightOutside(new Set(own.map((info) => info.executionId)), inflightAtPlan))
    candidates.delete(address);
  const addresses = [...candidates].sort();
  if (addresses.length > 0) requireErasable(subject, addresses.length, content);
  return { executions: own.map((info) => info.executionId), deleteHistories, addresses, touchCutoff, alreadyErased };
}

/** Opens another execution's sealed STEP_COMPLETED records whose refs meet the candidates, so trust is judged by position. */
async function openTrustedCandidates(
  codec: JournalCodec | undefined,
  executionId: string,
  records: StoredRecord[],
  candidates: Set<string>,
): Promise<StoredRecord[]> {
  if (!codec) return records;
  const relevant = records.filter(
    (r) => isSealed(r) && r.type === STEP_COMPLETED && (r.refs ?? []).some((a) => candidates.has(a)),
  );
  if (relevant.length === 0) return records;
  const opened = new Map((await codec.open(executionId, relevant)).map((r) => [r.seq, r]));
  return records.map((r) => opened.get(r.seq) ?? r);
}

/** The subject's executions as this coordinator's plan listed them (its journaled output). */
async function plannedExecutions(ctx: InternalEffectContext): Promise<Set<string>> {
  // The plan step's journaled output (an ErasePlan), read by narrowing: it comes from the store.
  const planned: unknown = (await ctx.readOwnLog()).find(
    (r) => r.type === STEP_COMPLETED && r.effectId === ERASE_EFFECTS.plan,
  )?.output;
  const executions =
    typeof planned === "object" && planned !== null && "executions" in planned ? planned.executions : undefined;
  return new Set(Array.isArray(executions) ? executions.filter((id): id is string => typeof id === "string") : []);
}

const progress = (ctx: InternalEffectContext, done: number, total: number) =>
  ctx.host.bus.emit("progress", { task: "erase.delete", done, total });

/** The coordinator's internal effects; each is idempotent (a crash before its outcome is journaled re-runs it). */
export const eraseEffects: Record<string, InternalEffect> = {
  [ERASE_EFFECTS.plan]: {
    run: ({ subject }: { subject: string }, ctx) => plan(subject, ctx),
  },
  [ERASE_EFFECTS.journalIntent]: {
    async run(input: { subject: string; addresses: string[]; touchCutoff: number | null }, ctx) {
      const written = (await ctx.readOwnLog()).find((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED);
      if (written) return { intentSeq: written.seq };
      return { intentSeq: await ctx.appendControl({ type: ERASURE_CONTENT_DELETE_INTENDED, ...input }) };
    },
  },
  [ERASE_EFFECTS.shred]: {
    async run({ subject, deleteHistories }: { subject: string; deleteHistories: string[] }, ctx) {
      const { host } = ctx;
      for (const keys of host.keyStores) await keys.destroy(subject);
      // No derived key outlives the subject's key in this process.
      forgetRecordKeys();
      const codec = host.codec;
      for (const executionId of deleteHistories) {
        await host.events.deleteHistory(executionId);
        if (codec instanceof SubjectCodec) codec.forget(executionId);
      }
      return { shredded: true };
    },
  },
  [ERASE_EFFECTS.deleteContent]: {
    async run(
      { subject, addresses, touchCutoff }: { subject: string; addresses: string[]; touchCutoff: number | null },
      ctx,
    ): Promise<ContentDeleted> {
      const result: ContentDeleted = { deleted: 0, retained: 0 };
      if (addresses.length === 0) return result;
      const content = ctx.host.content;
      requireErasable(subject, addresses.length, content);
      // Another execution's offload in flight now, or reported since the plan began (its put may predate the
      // cutoff, and its citing append may have landed after the plan read that log): cited, or about to be.
      const own = await plannedExecutions(ctx);
      const inflight = new Set([...inflightOutside(own), ...inflightOutside(own, watchedOffloads(ctx.executionId))]);
      for (const address of addresses) {
        if (inflight.has(address)) result.retained++;
        // Conditional only (D12): a blob re-put since the cutoff belongs to another execution now.
        else if (await content.deleteIfUntouchedSince(address, touchCutoff!)) result.deleted++;
        else if (await content.has(address)) result.retained++;
        else result.deleted++; // gone already: a crashed attempt deleted it before its outcome was journaled
        progress(ctx, result.deleted + result.retained, addresses.length);
      }
      return result;
    },
  },
  [ERASE_EFFECTS.journalResult]: {
    async run(input: { subject: string; intentSeq: number } & ContentDeleted, ctx) {
      const written = (await ctx.readOwnLog()).find(
        (r) => r.type === ERASURE_CONTENT_DELETED && r.intentSeq === input.intentSeq,
      );
      if (written) return { seq: written.seq };
      return { seq: await ctx.appendControl({ type: ERASURE_CONTENT_DELETED, ...input }) };
    },
  },
};

/** The typed error a failed coordinator journaled, rebuilt. */
function rebuildError(subject: string, error: unknown): Error {
  // A journaled SerializedError, read by narrowing: a primitive has none of its fields.
  const e: object = (typeof error === "object" || typeof error === "function") && error !== null ? error : {};
  const code = "code" in e ? e.code : undefined;
  if (code === RUNTIME_ERROR_CODES.contentCopiesRemain) {
    const blobs = "blobs" in e ? e.blobs : undefined;
    const reason = "reason" in e ? e.reason : undefined;
    // Kept: the constructor takes the reason union, and a foreign reason is passed on as journaled (not checked).
    return new ContentCopiesRemainError(subject, Number(blobs ?? -1), reason as ContentCopiesRemainReason);
  }
  const name = "name" in e ? e.name : undefined;
  const message = "message" in e ? e.message : undefined;
  return Object.assign(new Error(`Erasing subject "${subject}" failed: ${name ?? "Error"}: ${message ?? "unknown"}`), {
    code,
    cause: error,
  });
}

/** One erasure of `subject` (eraseSubject(app, subject) joins a running one first: actors/lifecycle/joins.ts). */
export async function erase(host: LifecycleHost, subject: string): Promise<EraseSubjectResult> {
  if (!host.eraseEnabled) {
    throw new ConfigError(
      "compliance.erase",
      "eraseSubject is off: set compliance: { erase: true } (and make sure the claim-check store can delete).",
    );
  }
  if (typeof subject !== "string" || subject === "")
    throw new ConfigError("eraseSubject.subject", "a non-empty subject id.");
  const { events } = host;
  const infos = await listOrRefuse(events, subject);
  // The subject's executions running here stop first: nothing of theirs is written after the plan.
  for (const info of infos)
    if (info.subject === subject) await host.stopRunning(info.executionId, "its subject is being erased");
  const coordinators = coordinatorsOf(infos, subject);
  const unfinished = coordinators.find((info) => info.status === "running");
  let coordinatorId: string;
  if (unfinished) {
    coordinatorId = unfinished.executionId;
    // D12: a journaled intent with addresses left is only finished over a store that deletes conditionally.
    const log = (await events.read(coordinatorId)).filter(isJournalRecord);
    const intent = log.find((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED);
    const finished = log.some((r) => r.type === ERASURE_CONTENT_DELETED);
    if (intent && !finished && intent.addresses.length > 0)
      requireErasable(subject, intent.addresses.length, host.content);
    await host.resume(coordinatorId, eraseCoordinatorMachine);
  } else {
    coordinatorId = eraseCoordinatorId(
      subject,
      Math.max(0, ...coordinators.map((info) => eraseCoordinatorNumber(subject, info.executionId))) + 1,
    );
    await host.start(eraseCoordinatorMachine, { executionId: coordinatorId, input: { subject, coordinatorId } });
  }
  const output = (await host
    .result(coordinatorId)
    .finally(() => unwatchOffloads(coordinatorId))) as EraseCoordinatorOutput;
  if (output.status === "failed") throw rebuildError(subject, output.error);
  // What this app holds in memory of the subject's executions is its data too.
  host.forgetSubject(subject, output.executions);
  const { status: _status, ...result } = output;
  return result;
}
