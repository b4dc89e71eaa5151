// The journal as the runtime sees it: the EventStore behind a codec that seals a subject's records
// (security.crypto) on the way in and opens them on the way out. Without crypto it is the store itself.
import type { EventStore, JournalRecord, StoredSnapshot } from "../stores/types.js";

/** Seals and opens record payloads; see actors/crypto.ts. */
export interface JournalCodec {
  seal(executionId: string, subject: string | undefined, records: JournalRecord[]): Promise<JournalRecord[]>;
  open(executionId: string, records: JournalRecord[]): Promise<JournalRecord[]>;
  /** `seq` is the snapshot's: a sealing codec binds the state to it so it cannot be moved to another seq. */
  sealState(executionId: string, subject: string | undefined, state: unknown, seq?: number): Promise<unknown>;
  openState(executionId: string, state: unknown, seq?: number): Promise<unknown>;
}

export class Journal {
  constructor(
    readonly events: EventStore,
    private readonly codec?: JournalCodec,
  ) {}

  async append(executionId: string, expectedSeq: number, records: JournalRecord[], subject?: string): Promise<void> {
    const sealed = this.codec ? await this.codec.seal(executionId, subject, records) : records;
    await this.events.append(executionId, expectedSeq, sealed);
  }

  async read(executionId: string, fromSeq = 1): Promise<JournalRecord[]> {
    const records = await this.events.read(executionId, fromSeq);
    return this.codec ? this.codec.open(executionId, records) : records;
  }

  async putSnapshot(executionId: string, snapshot: StoredSnapshot, subject?: string): Promise<void> {
    const state = this.codec ? await this.codec.sealState(executionId, subject, snapshot.state, snapshot.seq) : snapshot.state;
    await this.events.putSnapshot(executionId, { ...snapshot, state });
  }

  async getSnapshot(executionId: string): Promise<StoredSnapshot | undefined> {
    const snapshot = await this.events.getSnapshot(executionId);
    if (!snapshot || !this.codec) return snapshot;
    return { ...snapshot, state: await this.codec.openState(executionId, snapshot.state, snapshot.seq) };
  }
}
