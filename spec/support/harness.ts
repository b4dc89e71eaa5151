// Test harness: counted effects, a store that "dies" at a seq, helpers to run the demo machine.
import { createToolEffect } from "../../actors/effects/effect.js";
import type { EventStore, StoredRecord, StoredSnapshot, Stores } from "../../stores/types.js";

/** Effects that count every live run per step id, so a test can assert "ran exactly once". */
export function countedDemoEffects(options: { failWrite?: boolean } = {}) {
  const runs = new Map<string, number>();
  const count = (stepId: string) => runs.set(stepId, (runs.get(stepId) ?? 0) + 1);
  return {
    runs,
    effects: {
      research: createToolEffect(async ({ topic }: { topic: string }, ctx) => {
        count(ctx.stepId);
        return `notes on ${topic}`;
      }),
      write: createToolEffect(async ({ notes }: { notes: string[] }, ctx) => {
        count(ctx.stepId);
        if (options.failWrite) throw new Error("disk full");
        return `draft(${notes.join("|")})`;
      }),
    },
  };
}

/** Thrown by a DyingEventStore: the process "died" before this write reached the disk. */
export class SimulatedCrash extends Error {}

/** An EventStore that forwards every call to `inner`: fault-injecting test stores override what they change. */
export class ForwardingEventStore implements EventStore {
  readonly spiVersion: string;
  constructor(readonly inner: EventStore) {
    this.spiVersion = inner.spiVersion;
  }
  append(id: string, expected: number, records: StoredRecord[]) {
    return this.inner.append(id, expected, records);
  }
  read(id: string, from?: number) {
    return this.inner.read(id, from);
  }
  head(id: string) {
    return this.inner.head(id);
  }
  getExecution(id: string) {
    return this.inner.getExecution(id);
  }
  listExecutions() {
    return this.inner.listExecutions();
  }
  putSnapshot(id: string, snapshot: StoredSnapshot) {
    return this.inner.putSnapshot(id, snapshot);
  }
  getSnapshot(id: string) {
    return this.inner.getSnapshot(id);
  }
  archive(id: string, through: number) {
    return this.inner.archive(id, through);
  }
  readArchives(id: string) {
    return this.inner.readArchives(id);
  }
  deleteHistory(id: string) {
    return this.inner.deleteHistory(id);
  }
}

/**
 * An EventStore over `inner` that refuses (as if the process died first) every append that would
 * take the log past `crashAfterSeq`. What was appended before stays, as on a real disk.
 */
export class DyingEventStore extends ForwardingEventStore {
  constructor(
    inner: EventStore,
    private readonly crashAfterSeq: number,
  ) {
    super(inner);
  }
  override async append(id: string, expected: number, records: StoredRecord[]) {
    if ((records.at(-1)?.seq ?? 0) > this.crashAfterSeq)
      throw new SimulatedCrash(`crash after seq ${this.crashAfterSeq}`);
    return this.inner.append(id, expected, records);
  }
  override async putSnapshot() {
    // A dying process may or may not have written its snapshot; the log alone must suffice.
  }
}

export function withEvents(stores: Stores, events: EventStore): Stores {
  return { ...stores, events };
}

/** Waits until `predicate` holds, polling the microtask and timer queues. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
