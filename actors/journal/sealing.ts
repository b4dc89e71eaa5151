// security.crypto: the JournalCodec that seals each record (and snapshot state) of a subject's
// executions under that subject's key, over stores/recordSealing.ts. Executions without a subject are
// not sealed. Destroying the key (KeyStore.destroy, the shred) leaves the records in place, unreadable.
//
// What stays readable (the walker, the catalogue and replay's shape need no key):
// - every record: `seq`, `at`, `type`, the ids `stepId` / `effectId` / `timerId`, the transition's
//   `from` / `to`, and `refs`: the content addresses the record cites, listed by visitCitedAddresses
//   BEFORE sealing and bound into the AAD with the rest of the header;
// - the catalogue fields the store folds from what it appends: `subject`, `logicId`, `machineHash` and
//   `version` of EXECUTION_STARTED (and of EXECUTION_MIGRATED), `status` of EXECUTION_ENDED. They are copies: the sealed payload keeps the
//   originals, and `open` refuses a record whose readable copy differs (RecordAuthenticationError).
// A sealed snapshot state is `{ __loomSealedState: 1, seq, at, type, refs, sealed }`: the state sealed as a
// record of type `loom.snapshot` at the snapshot's seq, so it cannot be moved to another seq or execution.
//
// Sealing happens before the store's append is called: no WebCrypto work runs inside a storage transaction.
import { EXECUTION_ENDED, EXECUTION_MIGRATED, EXECUTION_STARTED } from "../../stores/schema.js";
import { KeyMissingError, SubjectErasedError } from "../../stores/errors.js";
import { isSealed, openRecord, RecordAuthenticationError, sealRecord } from "../../stores/recordSealing.js";
import type { EventStore, KeyStore, StoredRecord } from "../../stores/types.js";
import { SNAPSHOT_RECORD_TYPE } from "../constants.js";
import { ExecutionErasedError } from "../lifecycle/errors.js";
import { claimCheckRefsOf } from "../lifecycle/citations.js";
import type { JournalCodec } from "./journal.js";

/** The marker of a sealed snapshot state. */
export const SEALED_STATE_KEY = "__loomSealedState";

/** Fields copied beside a sealed record's header so the store's catalogue can fold them without the key. */
const CATALOGUE_FIELDS: Record<string, readonly string[]> = {
  [EXECUTION_STARTED]: ["subject", "logicId", "machineHash", "version"],
  [EXECUTION_ENDED]: ["status"],
  [EXECUTION_MIGRATED]: ["machineHash", "version"],
};

// ExecutionErasedError lives in actors/lifecycle/errors.ts, so the package entry exports it without importing this module.
export { ExecutionErasedError };

/** A sealed snapshot state as stored. */
export interface SealedState extends StoredRecord {
  [SEALED_STATE_KEY]: 1;
  sealed: string;
  refs?: string[];
}

export function isSealedState(state: unknown): state is SealedState {
  return typeof state === "object" && state !== null && Reflect.get(state, SEALED_STATE_KEY) === 1;
}

/** The JournalCodec of `security.crypto`, with a cache of each execution's subject (from the catalogue). */
export class SubjectCodec implements JournalCodec {
  private readonly subjects = new Map<string, string | undefined>();

  constructor(
    private readonly keys: KeyStore,
    private readonly events: EventStore,
  ) {}

  async seal(executionId: string, subject: string | undefined, records: StoredRecord[]): Promise<StoredRecord[]> {
    if (subject === undefined || records.length === 0) return records;
    this.subjects.set(executionId, subject);
    const key = await this.sealingKey(executionId, subject);
    return Promise.all(
      records.map(async (record) => {
        const sealed = await sealRecord(record, key, executionId, claimCheckRefsOf(record));
        for (const field of CATALOGUE_FIELDS[record.type] ?? [])
          if (record[field] !== undefined) sealed[field] = record[field];
        return sealed;
      }),
    );
  }

  async open(executionId: string, records: StoredRecord[]): Promise<StoredRecord[]> {
    if (!records.some(isSealed)) return records;
    const key = await this.openingKey(executionId, records.find(isSealed)!.seq, records);
    return Promise.all(
      records.map(async (record) => {
        if (!isSealed(record)) return record;
        const copies = CATALOGUE_FIELDS[record.type] ?? [];
        const header: StoredRecord = { ...record };
        for (const field of copies) delete header[field];
        const opened = await openRecord(header, key, executionId);
        for (const field of copies) {
          if (record[field] !== undefined && JSON.stringify(record[field]) !== JSON.stringify(opened[field])) {
            throw new RecordAuthenticationError(
              executionId,
              record.seq,
              `its readable "${field}" differs from the sealed payload`,
            );
          }
        }
        return opened;
      }),
    );
  }

  async sealState(executionId: string, subject: string | undefined, state: unknown, seq = 0): Promise<unknown> {
    if (subject === undefined) return state;
    const key = await this.sealingKey(executionId, subject);
    const record: StoredRecord = { seq, at: 0, type: SNAPSHOT_RECORD_TYPE, state };
    return { [SEALED_STATE_KEY]: 1, ...(await sealRecord(record, key, executionId, claimCheckRefsOf(state))) };
  }

  async openState(executionId: string, state: unknown, seq?: number): Promise<unknown> {
    if (!isSealedState(state)) return state;
    const { [SEALED_STATE_KEY]: _marker, ...record } = state;
    if (seq !== undefined && record.seq !== seq) {
      throw new RecordAuthenticationError(executionId, seq, `the sealed snapshot state belongs to seq ${record.seq}`);
    }
    const key = await this.openingKey(executionId, record.seq, []);
    return (await openRecord(record, key, executionId)).state;
  }

  /** Forgets cached subjects (after a history was deleted or a subject erased). */
  forget(executionId?: string): void {
    if (executionId === undefined) this.subjects.clear();
    else this.subjects.delete(executionId);
  }

  private async sealingKey(executionId: string, subject: string): Promise<Uint8Array> {
    try {
      return await this.keys.getOrCreate(subject);
    } catch (error) {
      if (error instanceof SubjectErasedError) throw new ExecutionErasedError(executionId, subject);
      throw error;
    }
  }

  private async openingKey(executionId: string, seq: number, records: StoredRecord[]): Promise<Uint8Array> {
    const subject = await this.subjectOf(executionId, records);
    if (subject === undefined)
      throw new RecordAuthenticationError(
        executionId,
        seq,
        "the execution has no subject, so nothing of it was sealed",
      );
    let key: Uint8Array | undefined;
    try {
      key = await this.keys.get(subject);
    } catch (error) {
      if (error instanceof KeyMissingError)
        throw new KeyMissingError(subject, { location: error.location, executionId });
      throw error;
    }
    if (key) return key;
    if (await this.keys.isDestroyed(subject)) throw new ExecutionErasedError(executionId, subject);
    // Records sealed under a key the store has no trace of (it lost the key and its record of it): the
    // key is missing, never "nothing was sealed".
    throw new KeyMissingError(subject, { executionId });
  }

  private async subjectOf(executionId: string, records: StoredRecord[]): Promise<string | undefined> {
    if (this.subjects.has(executionId)) return this.subjects.get(executionId);
    const started = records.find((r) => r.type === EXECUTION_STARTED && typeof r.subject === "string")?.subject;
    const subject =
      (typeof started === "string" ? started : undefined) ?? (await this.events.getExecution(executionId))?.subject;
    if (subject !== undefined) this.subjects.set(executionId, subject);
    return subject;
  }
}

/**
 * The codec `security.crypto: { keys }` installs: seals a subject's records and snapshot states on the way
 * into `events`, opens them on the way out.
 *
 * @example
 * const journal = new Journal(stores.events, createJournalCodec(stores.keys, stores.events));
 */
export function createJournalCodec(keys: KeyStore, events: EventStore): SubjectCodec {
  return new SubjectCodec(keys, events);
}
