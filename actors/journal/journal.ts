// The journal as the runtime sees it: the EventStore behind a codec that seals a subject's records
// (security.crypto) on the way in and opens them on the way out. Without crypto it is the store itself.
//
// It is also where a resume finds its starting point (`getSnapshot`, `readForReplay`): a snapshot is a
// cache of the log, so a damaged one is skipped with a warning and the history replayed from the
// archive segments and the live log; only when those do not cover it is the damage an error.
//
// Records are stored in the stored form of schema 3 (stores/recordFormat.ts): a macrostep is compacted
// before it is sealed and appended, and every read expands what it opened back to the read form.
import { JournalCorruptionError } from "../../stores/errors.js";
import { compactMacrostep, expandRecords } from "../../stores/recordFormat.js";
import { readAsJournal } from "../../stores/schema.js";
import type { EventStore, JournalRecord, StoredRecord, StoredSnapshot } from "../../stores/types.js";
import type { Warning } from "../bus.js";
import { WARNING_CODES } from "../constants.js";

/** Seals and opens record payloads; see actors/journal/sealing.ts. */
export interface JournalCodec {
  seal(executionId: string, subject: string | undefined, records: StoredRecord[]): Promise<StoredRecord[]>;
  /** Opens stored records; they stay `StoredRecord` (the journal narrows them to the union). */
  open(executionId: string, records: StoredRecord[]): Promise<StoredRecord[]>;
  /** `seq` is the snapshot's: a sealing codec binds the state to it so it cannot be moved to another seq. */
  sealState(executionId: string, subject: string | undefined, state: unknown, seq?: number): Promise<unknown>;
  openState(executionId: string, state: unknown, seq?: number): Promise<unknown>;
}

export class Journal {
  constructor(
    readonly events: EventStore,
    /** The sealing codec (`security.crypto`, actors/journal/sealing.ts) its records and snapshots pass through. */
    readonly codec?: JournalCodec,
    private readonly warn: (warning: Warning) => void = () => undefined,
  ) {}

  /** Appends one batch (a macrostep's records, input first, or records between macrosteps) in the stored form. */
  async append(executionId: string, expectedSeq: number, records: JournalRecord[], subject?: string): Promise<void> {
    const stored = compactMacrostep(records);
    const sealed = this.codec ? await this.codec.seal(executionId, subject, stored) : stored;
    await this.events.append(executionId, expectedSeq, sealed);
  }

  /** The live records from `fromSeq`, opened, in the read form (from seq 1, or see RecordExpander). */
  async read(executionId: string, fromSeq = 1): Promise<JournalRecord[]> {
    const records = await this.events.read(executionId, fromSeq);
    return readAsJournal(expandRecords(this.codec ? await this.codec.open(executionId, records) : records));
  }

  /** Every record of the execution, archived ones first, opened, in the read form: what `app.log` returns. */
  async readLog(executionId: string): Promise<JournalRecord[]> {
    const archived = (await this.events.readArchives(executionId)).flatMap((segment) => segment.records);
    const records = [...archived, ...(await this.events.read(executionId))];
    return readAsJournal(expandRecords(this.codec ? await this.codec.open(executionId, records) : records));
  }

  /**
   * The records a replay from `fromSeq` needs: the live ones, preceded by archived ones when the live log
   * starts later (a resume that could not use its snapshot replays from seq 1).
   */
  async readForReplay(executionId: string, fromSeq = 1): Promise<JournalRecord[]> {
    let records = await this.events.read(executionId, fromSeq);
    const firstLive = records[0]?.seq ?? (await this.events.head(executionId)) + 1;
    if (firstLive > fromSeq) {
      const archived = (await this.events.readArchives(executionId))
        .flatMap((s) => s.records)
        .filter((r) => r.seq >= fromSeq && r.seq < firstLive);
      records = [...archived, ...records];
    }
    return readAsJournal(expandRecords(this.codec ? await this.codec.open(executionId, records) : records));
  }

  async putSnapshot(executionId: string, snapshot: StoredSnapshot, subject?: string): Promise<void> {
    const state = this.codec
      ? await this.codec.sealState(executionId, subject, snapshot.state, snapshot.seq)
      : snapshot.state;
    await this.events.putSnapshot(executionId, { ...snapshot, state });
  }

  /**
   * The snapshot a resume starts from. One that fails its checksum (`JournalCorruptionError` of kind
   * "snapshot") is a lost cache: warns `LOOM_SNAPSHOT_DAMAGED` and resolves undefined (replay from seq 1),
   * provided the archive segments and the live log hold every record from seq 1; else it rejects.
   */
  async getSnapshot(executionId: string): Promise<StoredSnapshot | undefined> {
    let snapshot: StoredSnapshot | undefined;
    try {
      snapshot = await this.events.getSnapshot(executionId);
    } catch (error) {
      if (!(error instanceof JournalCorruptionError) || error.kind !== "snapshot") throw error;
      await this.assertWholeHistory(executionId, error);
      this.warn({
        code: WARNING_CODES.snapshotDamaged,
        message: `${error.message} Execution "${executionId}" is replayed from its log instead.`,
        executionId,
        file: error.file,
        offset: error.offset,
      });
      return undefined;
    }
    if (snapshot) {
      // Any adapter: a snapshot past the head means the log lost records the snapshot had seen.
      const head = await this.events.head(executionId);
      if (snapshot.seq > head) {
        throw new JournalCorruptionError(
          `the journal of execution "${executionId}"`,
          0,
          `the log ends at seq ${head}, but its snapshot folds the records through seq ${snapshot.seq}: the log lost records the snapshot had seen`,
          {
            kind: "behind-snapshot",
            remedy:
              'Restore the journal from a backup; or, to resume from what the log holds (the steps after its last seq run again), delete the snapshot (docs/storage.md, "Recovery").',
          },
        );
      }
    }
    if (!snapshot || !this.codec) return snapshot;
    return { ...snapshot, state: await this.codec.openState(executionId, snapshot.state, snapshot.seq) };
  }

  // A replay from seq 1 needs every record: the segments contiguous from 1, then the live log after them.
  private async assertWholeHistory(executionId: string, damage: JournalCorruptionError): Promise<void> {
    const refuse = (why: string) =>
      new JournalCorruptionError(
        damage.file,
        damage.offset,
        `the snapshot is damaged and ${why}, so nothing whole covers the history`,
        {
          kind: "snapshot",
          remedy: 'Restore the snapshot or the damaged segment from a backup (docs/storage.md, "Recovery").',
        },
      );
    let next = 1;
    try {
      for (const segment of await this.events.readArchives(executionId)) {
        if (segment.fromSeq > next) throw refuse(`no archive segment holds seqs ${next}-${segment.fromSeq - 1}`);
        next = Math.max(next, segment.toSeq + 1);
      }
    } catch (error) {
      if (error instanceof JournalCorruptionError && error.kind !== "snapshot")
        throw refuse(`an archive segment is damaged too (${error.file})`);
      throw error;
    }
    const live = await this.events.read(executionId, next);
    const head = await this.events.head(executionId);
    if ((live[0]?.seq ?? head + 1) > next) throw refuse(`the live log does not start at seq ${next}`);
  }
}
