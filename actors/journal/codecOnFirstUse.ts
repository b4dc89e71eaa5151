// The app's `security.crypto` journal codec, whose code (actors/journal/sealing.ts, record sealing, the
// content walker it lists refs with) loads on the first record it seals or opens (issue 18): an app
// without security.crypto, or one that has not yet journaled, does not bundle it at start. It behaves as
// the SubjectCodec it loads (`createJournalCodec(keys, events)`), one per app.
import type { EventStore, JournalRecord, KeyStore, StoredRecord } from "../../stores/types.js";
import type { JournalCodec } from "./journal.js";
import type { SubjectCodec } from "./sealing.js";

export class SubjectCodecOnFirstUse implements JournalCodec {
  private codec: Promise<SubjectCodec> | undefined;
  private loaded: SubjectCodec | undefined;

  constructor(
    private readonly keys: KeyStore,
    private readonly events: EventStore,
  ) {}

  async seal(executionId: string, subject: string | undefined, records: JournalRecord[]): Promise<StoredRecord[]> {
    return (await this.load()).seal(executionId, subject, records);
  }

  async open(executionId: string, records: StoredRecord[]): Promise<StoredRecord[]> {
    return (await this.load()).open(executionId, records);
  }

  async sealState(executionId: string, subject: string | undefined, state: unknown, seq?: number): Promise<unknown> {
    return (await this.load()).sealState(executionId, subject, state, seq);
  }

  async openState(executionId: string, state: unknown, seq?: number): Promise<unknown> {
    return (await this.load()).openState(executionId, state, seq);
  }

  /** SubjectCodec's `forget`: drops what it cached of the execution (nothing before it loaded). */
  forget(executionId?: string): void {
    this.loaded?.forget(executionId);
  }

  private load(): Promise<SubjectCodec> {
    this.codec ??= import("../lifecycle/onFirstUse.js").then((m) => (this.loaded = m.createJournalCodec(this.keys, this.events)));
    return this.codec;
  }
}

/**
 * The codec `security.crypto: { keys }` installs: seals a subject's records and snapshot states on the way
 * into `events`, opens them on the way out. Its code loads on the first record it seals or opens, so an
 * app importing the package does not bundle it at start (issue 18); it behaves as the SubjectCodec it loads.
 *
 * @example
 * const journal = new Journal(stores.events, createJournalCodec(stores.keys, stores.events));
 */
export function createJournalCodec(keys: KeyStore, events: EventStore): SubjectCodecOnFirstUse {
  return new SubjectCodecOnFirstUse(keys, events);
}
