// Erasure and a citation in flight (ADR 0140 D8, D12): erasure never deletes a blob another subject cites
// or is about to. The window: B's identical blob was put before the erasure began (so its touch is older
// than the erasure's cutoff), and the STEP_COMPLETED of B that cites it is appended only after the erasure's
// plan read B's log. The interleaving is forced by an event store that holds B's citing append until the
// plan has read B's log. Memory, IndexedDB (fake-indexeddb) and PostgreSQL stores, plaintext content (a
// sealing store keys addresses per subject, so two subjects never share a blob there).
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { ContentStore, EventStore, StoredRecord } from "../../stores/types.js";
import { startPostgres, type PgServer } from "../postgres/server.js";
import {
  indexedDbHarness,
  memoryHarness,
  postgresHarness,
  withStores,
  type AdapterHarness,
} from "../support/adapterHarness.js";
import { ForwardingEventStore } from "../support/harness.js";
import { offloaded, runAgent, world } from "./support.js";
import { eraseSubject } from "../../lifecycle.js";

let server: PgServer | undefined;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});

/** A promise and the function that settles it. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

/**
 * Holds the append of `executionId`'s first STEP_COMPLETED of `effectId` until `read(executionId)` was
 * answered to someone else (the erasure's plan): `parked` fires when the append waits, `released` once the
 * read has returned.
 */
class CitingAppendAfterRead extends ForwardingEventStore {
  readonly parked = signal();
  readonly released = signal();
  private holding = false;
  constructor(
    inner: EventStore,
    private readonly executionId: string,
    private readonly effectId: string,
  ) {
    super(inner);
  }
  override async append(id: string, expected: number, records: StoredRecord[]) {
    if (
      id === this.executionId &&
      !this.holding &&
      records.some((r) => r.type === STEP_COMPLETED && r.effectId === this.effectId)
    ) {
      this.holding = true;
      this.parked.fire();
      await this.released.promise;
    }
    return super.append(id, expected, records);
  }
  override async read(id: string, from?: number) {
    const records = await super.read(id, from);
    if (id === this.executionId && this.holding) this.released.fire();
    return records;
  }
}

/**
 * A content store over `inner` whose next put, once armed, is written at once (`written` fires: its touch
 * predates whatever comes next) but answered to the claim-check only when `answer` fires; `deleting`
 * fires at the first conditional delete.
 */
function slowToAnswer(inner: ContentStore) {
  const written = signal();
  const answer = signal();
  const deleting = signal();
  let armed = false;
  const store: ContentStore = {
    spiVersion: inner.spiVersion,
    sealsContent: inner.sealsContent,
    async put(bytes, options) {
      const address = await inner.put(bytes, options);
      if (armed) {
        armed = false;
        written.fire();
        await answer.promise;
      }
      return address;
    },
    get: (address, options) => inner.get(address, options),
    has: (address) => inner.has(address),
    delete: (address) => inner.delete!(address),
    deleteIfUntouchedSince(address, cutoff) {
      deleting.fire();
      return inner.deleteIfUntouchedSince!(address, cutoff);
    },
    touchClock: () => inner.touchClock!(),
    list: () => inner.list(),
  };
  return { store, written, answer, deleting, arm: () => (armed = true) };
}

/**
 * Holds `executionId`'s first STEP_COMPLETED of `effectId` until `release` fires; once `holdReads()` was
 * called, the next read of its log is answered only when `answerRead` fires (`logRead` fires when it waits).
 */
class HeldCitingAppend extends ForwardingEventStore {
  readonly release = signal();
  readonly logRead = signal();
  readonly answerRead = signal();
  private held = false;
  private holdingReads = false;
  constructor(
    inner: EventStore,
    private readonly executionId: string,
    private readonly effectId: string,
  ) {
    super(inner);
  }
  holdReads(): void {
    this.holdingReads = true;
  }
  override async append(id: string, expected: number, records: StoredRecord[]) {
    if (
      id === this.executionId &&
      !this.held &&
      records.some((r) => r.type === STEP_COMPLETED && r.effectId === this.effectId)
    ) {
      this.held = true;
      await this.release.promise;
    }
    return super.append(id, expected, records);
  }
  override async read(id: string, from?: number) {
    const records = await super.read(id, from);
    if (id === this.executionId && this.holdingReads) {
      this.holdingReads = false;
      this.logRead.fire();
      await this.answerRead.promise;
    }
    return records;
  }
}

const HARNESSES: [string, () => AdapterHarness][] = [
  ["memory", memoryHarness],
  ["IndexedDB (fake-indexeddb)", () => indexedDbHarness({ IDBFactory, IDBKeyRange })],
  ["PostgreSQL", () => postgresHarness(() => server!.url)],
];

describe("erasure spares a blob whose citing append by another subject is in flight while it plans", () => {
  for (const [name, harness] of HARNESSES) {
    it(
      `${name}: B's identical blob, put before the erasure began and cited by an append landing after the plan read B's log, stays`,
      withStores(harness(), async ({ stores }) => {
        let gated: CitingAppendAfterRead | undefined;
        const w = world({
          stores,
          snapshotEvery: false,
          events: (s) => (gated = new CitingAppendAfterRead(s.events, "b1", "shared")),
        });
        const app = w.app();
        await runAgent(app, "a1", "A", ["fetch", "shared"]);
        const a = await offloaded(app, "a1");

        // B runs the same tool: its blob has A's address; its citing append waits at the gate.
        await app.start(
          agentLoop$({ id: "agent-shared", model: "model", tools: ["shared"], warnTranscriptBytes: false }),
          { executionId: "b1", subject: "B", input: { prompt: "b" } },
        );
        await gated!.parked.promise;
        const erased = eraseSubject(app, "A");
        await gated!.released.promise; // the plan has read b1's log; the citing append lands now
        const result = await erased;
        expect(await app.result("b1")).toMatchObject({ text: "done" });

        const b = await offloaded(app, "b1");
        expect(b.shared, "one blob, cited by both subjects").toBe(a.shared);
        expect(await w.content.has(a.fetch!), "A's own blob is erased").toBe(false);
        expect(await w.content.has(a.shared!), "B's only copy of its tool result").toBe(true);
        const citing = (await app.log("b1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "shared")!;
        expect(await app.resolveClaimCheck(citing.output, { subject: "B" })).toMatchObject({ dataset: "public" });
        expect(result.contentDeleted.deleted).toBe(1);
        await app.close();
      }),
      120_000,
    );
  }
});

// B's offload is reported only after the plan began (its put's answer was slow), so the plan neither saw it
// in flight nor read its citation; the citing append then lands either after the erasure's delete began, or
// before it.
for (const landing of ["after", "before"] as const) {
  describe(`erasure spares a blob another subject's offload reports after the plan began, its citing append landing ${landing} the delete`, () => {
    for (const [name, harness] of HARNESSES) {
      it(
        `${name}: B's put lands before the erasure's cutoff and is reported after the plan read B's log: the blob stays`,
        withStores(harness(), async ({ stores }) => {
          const slow = slowToAnswer(stores.content);
          let held: HeldCitingAppend | undefined;
          const w = world({
            stores,
            snapshotEvery: false,
            content: () => slow.store,
            events: (s) => (held = new HeldCitingAppend(s.events, "b1", "shared")),
          });
          const app = w.app();
          await runAgent(app, "a1", "A", ["fetch", "shared"]);
          const a = await offloaded(app, "a1");

          slow.arm();
          await app.start(
            agentLoop$({ id: "agent-shared", model: "model", tools: ["shared"], warnTranscriptBytes: false }),
            { executionId: "b1", subject: "B", input: { prompt: "b" } },
          );
          await slow.written.promise; // B's blob is written (touched) before the erasure reads its cutoff
          held!.holdReads();
          const erased = eraseSubject(app, "A");
          await held!.logRead.promise; // the plan has read b1's log: no citation there, nothing in flight when it began
          const reported = new Promise<void>((resolve) =>
            app.on("offload", ({ executionId }) => executionId === "b1" && resolve()),
          );
          slow.answer.fire();
          await reported; // B's offload is reported after the plan began
          if (landing === "before") {
            const cited = new Promise<void>((resolve) =>
              app.on(
                "append",
                ({ executionId, records }) =>
                  executionId === "b1" && records.some((r) => r.type === STEP_COMPLETED) && resolve(),
              ),
            );
            held!.release.fire();
            await cited; // the citing append has landed: nothing is in flight any more
            held!.answerRead.fire();
          } else {
            held!.answerRead.fire();
            await slow.deleting.promise; // the erasure deletes while the citing append is still held
            held!.release.fire();
          }
          const result = await erased;
          expect(await app.result("b1")).toMatchObject({ text: "done" });

          expect((await offloaded(app, "b1")).shared, "one blob, cited by both subjects").toBe(a.shared);
          expect(await w.content.has(a.fetch!), "A's own blob is erased").toBe(false);
          expect(await w.content.has(a.shared!), "B's only copy of its tool result").toBe(true);
          expect(result.contentDeleted).toEqual({ deleted: 1, retained: 1 });
          await app.close();
        }),
        120_000,
      );
    }
  });
}
