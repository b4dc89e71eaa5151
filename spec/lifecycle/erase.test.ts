// ADR 0140 D8 (b), D11 (3), D12: eraseSubject and the eraseCoordinator machine, one test per sentence.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { simulatedClock } from "../../actors/clock.js";
import { ExecutionErasedError } from "../../actors/journal/sealing.js";
import { ContentCopiesRemainError } from "../../actors/lifecycle/erase.js";
import { ERASE_COORDINATOR_LOGIC_ID } from "../../machines/eraseCoordinator.js";
import { utf8 } from "../../stores/bytes.js";
import { openRecord, RecordAuthenticationError } from "../../stores/recordSealing.js";
import {
  ERASURE_CONTENT_DELETE_INTENDED,
  ERASURE_CONTENT_DELETED,
  EVENT_RECEIVED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
} from "../../stores/schema.js";
import type { ContentStore, EventStore, StoredRecord } from "../../stores/types.js";
import { anyPath, forgedEnvelope, plant } from "./forgery.js";
import {
  canaryOf,
  CrashingEvents,
  everything,
  offloaded,
  rejection,
  runAgent,
  SimulatedCrash,
  world,
  type World,
} from "./support.js";
import { archive, eraseSubject, exportSubject, sweep } from "../../lifecycle.js";

const envelope = (address: string) => ({ __loomClaimCheck: 1, ref: { __loomContent: address }, size: 9, retain: true });
/** The store minus one of its optional methods. */
const without = (store: ContentStore, method: "delete" | "deleteIfUntouchedSince" | "touchClock"): ContentStore =>
  Object.assign(Object.create(Object.getPrototypeOf(store)), store, { [method]: undefined });

/** A history written straight through the SPI (to place a citation exactly where a test needs it). */
async function craft(
  events: EventStore,
  executionId: string,
  subject: string,
  records: Omit<StoredRecord, "seq" | "at">[],
  snapshotState?: unknown,
) {
  const start = { type: EXECUTION_STARTED, logicId: "crafted", machineHash: "0", subject, input: null, schema: 1 };
  const all = [start, ...records].map((r, i) => ({ seq: i + 1, at: 1, ...r }) as StoredRecord);
  await events.append(executionId, 0, all);
  if (snapshotState !== undefined)
    await events.putSnapshot(executionId, { seq: all.length, at: 1, state: snapshotState });
}

const coordinatorLog = (w: World, n = 1) => w.stores.events.read(`loom.erase:A:${n}`);

describe("ADR 0140 D8 (b): eraseSubject collects before it destroys", () => {
  it("collects every ref the subject's executions cite: live logs, archive segments and snapshots", async () => {
    const w = world();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch", "public2"]);
    await archive(app, "a1");
    const onlyInSnapshot = await w.content.put(utf8('"snapshot only"'));
    await craft(w.stores.events, "a2", "A", [], { context: { doc: envelope(onlyInSnapshot) } });
    const { fetch, public2 } = await offloaded(app, "a1");
    const result = await eraseSubject(app, "A");
    expect(result.contentDeleted).toEqual({ deleted: 3, retained: 0 });
    const intent = (await coordinatorLog(w)).find((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED)!;
    expect(intent.addresses).toEqual([fetch, public2, onlyInSnapshot].sort());
    for (const address of [fetch!, public2!, onlyInSnapshot]) expect(await w.content.has(address)).toBe(false);
  });

  it("drops each blob another, non-erased execution still cites at the trusted position (a deduplicated identical blob stays)", async () => {
    const w = world();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch", "shared"]);
    await runAgent(app, "b1", "B", ["shared"]);
    const a = await offloaded(app, "a1");
    expect((await offloaded(app, "b1")).shared).toBe(a.shared);
    const result = await eraseSubject(app, "A");
    expect(result.contentDeleted).toEqual({ deleted: 1, retained: 0 });
    expect((await coordinatorLog(w)).find((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED)!.addresses).toEqual([
      a.fetch,
    ]);
    expect(await w.content.has(a.fetch!)).toBe(false);
    expect((await exportSubject(app, "B")).claimChecked).toEqual([
      expect.objectContaining({ address: a.shared, value: expect.objectContaining({ dataset: "public" }) }),
    ]);
  });

  it("D11 (3): another execution's nested lookalike (an unlisted tool's output) counts as no citation", async () => {
    const w = world();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    const { fetch } = await offloaded(app, "a1");
    w.outputs.set("B", { page: [{ quote: forgedEnvelope(fetch!) }] });
    await runAgent(app, "b1", "B", ["note"]);
    expect(await w.stores.events.getSnapshot("b1")).toBeDefined();
    expect((await eraseSubject(app, "A")).contentDeleted.deleted).toBe(1);
    expect(await w.content.has(fetch!)).toBe(false);
  });

  it("D11 (3): nor does a lookalike at the TOP of an unlisted tool's output (the claim-check never wrote it)", async () => {
    const w = world();
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    const { fetch } = await offloaded(app, "a1");
    w.outputs.set("B", forgedEnvelope(fetch!));
    await runAgent(app, "b1", "B", ["note"]);
    expect((await app.log("b1")).find((r) => r.effectId === "note" && r.type === STEP_COMPLETED)!.output).toEqual(
      forgedEnvelope(fetch!),
    );
    expect((await eraseSubject(app, "A")).contentDeleted).toEqual({ deleted: 1, retained: 0 });
    expect(await w.content.has(fetch!)).toBe(false);
  });

  it("D11 (3): another execution's snapshot counts only when it has no STEP_COMPLETED left", async () => {
    for (const withStep of [false, true]) {
      const w = world();
      const shared = await w.content.put(utf8('"shared"'));
      await craft(w.stores.events, "a1", "A", [
        { type: STEP_COMPLETED, stepId: "x#turn:0:tool:0", effectId: "fetch", output: envelope(shared) },
      ]);
      const other = [
        { type: EVENT_RECEIVED, event: { type: "ATTACH", doc: envelope(shared) } },
        ...(withStep
          ? [{ type: STEP_COMPLETED, stepId: "y#turn:0:tool:0", effectId: "t", output: { unrelated: true } }]
          : []),
      ];
      await craft(w.stores.events, "b1", "B", other, { context: { doc: envelope(shared) } });
      await eraseSubject(w.app(), "A");
      // History gone, the snapshot is the sole evidence: it vouches (fail closed). With a step left, the log vouches or not.
      expect(await w.content.has(shared), `b1 ${withStep ? "with" : "without"} a STEP_COMPLETED`).toBe(!withStep);
    }
  });
});

describe("ADR 0140 D8 / D12: refusal with ContentCopiesRemainError BEFORE the shred", () => {
  async function refused(w: World, erase: () => Promise<unknown>, reason: string, priorIntents = 0) {
    const { fetch } = await offloaded(w.app(), "a1");
    const error = (await rejection(erase())) as ContentCopiesRemainError;
    expect(error).toBeInstanceOf(ContentCopiesRemainError);
    expect(error).toMatchObject({ code: "LOOM_CONTENT_COPIES_REMAIN", subject: "A", reason });
    expect(error.message).toMatch(/Nothing was erased/);
    expect(await w.stores.keys.isDestroyed("A")).toBe(false);
    expect(await w.stores.content.has(fetch!)).toBe(true);
    const records = (
      await Promise.all((await w.stores.events.listExecutions()).map((i) => w.stores.events.read(i.executionId)))
    ).flat();
    expect(records.filter((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED)).toHaveLength(priorIntents);
    expect(records.some((r) => r.type === ERASURE_CONTENT_DELETED)).toBe(false);
  }
  async function cited() {
    const w = world();
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    return w;
  }

  it("when blobs are cited and no content store is wired", async () => {
    const w = await cited();
    await refused(w, () => eraseSubject("A", { events: w.stores.events, keys: w.stores.keys }), "not-wired");
  });

  it("when the content store cannot delete", async () => {
    const w = await cited();
    await refused(
      w,
      () => eraseSubject("A", { events: w.stores.events, keys: w.stores.keys, content: without(w.content, "delete") }),
      "cannot-delete",
    );
  });

  it("D12: when the content store lacks deleteIfUntouchedSince", async () => {
    const w = await cited();
    await refused(
      w,
      () => eraseSubject(w.app({ content: without(w.content, "deleteIfUntouchedSince") }), "A"),
      "no-conditional-delete",
    );
  });

  it("D12: when the content store lacks touchClock", async () => {
    const w = await cited();
    await refused(
      w,
      () => eraseSubject(w.app({ content: without(w.content, "touchClock") }), "A"),
      "no-conditional-delete",
    );
  });

  it("when the event store cannot be enumerated", async () => {
    const w = await cited();
    const events = Object.assign(Object.create(w.stores.events), {
      listExecutions: () => Promise.reject(new Error("no index")),
    });
    await refused(w, () => eraseSubject(w.app({ events }), "A"), "not-enumerable");
  });

  it("D12: including when a journaled intent from a prior attempt still has addresses to delete", async () => {
    const w = await cited();
    const dying = new CrashingEvents(w.stores.events, { prefix: "loom.erase:", at: 3, mode: "after" });
    expect(await rejection(eraseSubject(w.app({ events: dying }), "A"))).toBeInstanceOf(SimulatedCrash);
    expect((await coordinatorLog(w)).at(-1)!.type).toBe(ERASURE_CONTENT_DELETE_INTENDED);
    await refused(
      w,
      () => eraseSubject(w.app({ content: without(w.content, "deleteIfUntouchedSince") }), "A"),
      "no-conditional-delete",
      1,
    );
    // Over a store that can, the retry finishes from that intent.
    expect((await eraseSubject(w.app(), "A")).contentDeleted.deleted).toBe(1);
  });

  it("nothing cited, nothing to refuse: a subject without blobs erases over any store", async () => {
    const w = world();
    await runAgent(w.app(), "a1", "A", ["note"]);
    const result = await eraseSubject("A", {
      events: w.stores.events,
      keys: w.stores.keys,
      content: without(w.content, "delete"),
    });
    expect(result).toMatchObject({ shredded: true, contentDeleted: { deleted: 0, retained: 0 } });
  });
});

describe("the eraseCoordinator: plan -> journal intent -> shred -> conditional deletes -> journal result", () => {
  it("journals ERASURE_CONTENT_DELETE_INTENDED { subject, addresses, touchCutoff } before the shred, and ERASURE_CONTENT_DELETED { subject, intentSeq, deleted, retained } after", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    const { fetch } = await offloaded(app, "a1");
    let logAtShred: StoredRecord[] = [];
    const destroy = w.stores.keys.destroy.bind(w.stores.keys);
    w.stores.keys.destroy = async (subject) => {
      logAtShred = await coordinatorLog(w);
      return destroy(subject);
    };
    const result = await eraseSubject(app, "A");
    const log = await coordinatorLog(w);
    const intent = log.find((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED)!;
    const done = log.find((r) => r.type === ERASURE_CONTENT_DELETED)!;
    expect(intent).toMatchObject({ subject: "A", addresses: [fetch], touchCutoff: expect.any(Number) });
    expect(done).toMatchObject({ subject: "A", intentSeq: intent.seq, deleted: 1, retained: 0 });
    expect(logAtShred.some((r) => r.type === ERASURE_CONTENT_DELETE_INTENDED)).toBe(true);
    expect(logAtShred.some((r) => r.type === ERASURE_CONTENT_DELETED)).toBe(false);
    expect(result).toEqual({
      subject: "A",
      executions: ["a1"],
      shredded: true,
      alreadyErased: false,
      historiesDeleted: [],
      contentDeleted: { deleted: 1, retained: 0 },
      coordinatorId: "loom.erase:A:1",
      intentSeq: intent.seq,
    });
  });

  it("runs as a journaled execution of the coordinator machine, with no subject: its log stays readable after the shred", async () => {
    const w = world({ crypto: true });
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    await eraseSubject(w.app(), "A");
    const info = (await w.stores.events.getExecution("loom.erase:A:1"))!;
    expect(info).toMatchObject({ logicId: ERASE_COORDINATOR_LOGIC_ID, status: "done" });
    expect(info.subject).toBeUndefined();
    const steps = (await w.app().log("loom.erase:A:1")).filter((r) => r.type === STEP_COMPLETED).map((r) => r.stepId);
    expect(steps).toEqual([
      "loom.eraseCoordinator#plan",
      "loom.eraseCoordinator#intent",
      "loom.eraseCoordinator#shred",
      "loom.eraseCoordinator#delete",
      "loom.eraseCoordinator#result",
    ]);
  });

  it("sealed histories are crypto-shredded in place; unsealed ones (no security.crypto) are deleted whole by the shred", async () => {
    const sealed = world({ crypto: true });
    await runAgent(sealed.app(), "a1", "A", ["fetch"]);
    expect((await eraseSubject(sealed.app(), "A")).historiesDeleted).toEqual([]);
    expect(await sealed.stores.events.getExecution("a1")).toBeDefined();
    const plain = world();
    await runAgent(plain.app(), "a1", "A", ["fetch"]);
    await runAgent(plain.app(), "b1", "B", ["fetch"]);
    expect((await eraseSubject(plain.app(), "A")).historiesDeleted).toEqual(["a1"]);
    expect(await plain.stores.events.getExecution("a1")).toBeUndefined();
    expect(await plain.stores.events.getExecution("b1")).toBeDefined();
  });

  it("stops the subject's executions running in this app before it plans", async () => {
    let release!: () => void;
    let arrive!: () => void;
    const parked = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    const w = world({ crypto: true, beforeAnswer: () => (arrive(), parked) });
    const app = w.app();
    const run = runAgent(app, "a1", "A", ["fetch"]).catch((error: unknown) => error);
    await reached; // the run is parked in its last model call
    await eraseSubject(app, "A");
    release();
    expect(String(await run)).toMatch(/its subject is being erased/);
  });

  it("a concurrent erase of the same subject in the same app joins the running one", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    const [first, second] = await Promise.all([eraseSubject(app, "A"), eraseSubject(app, "A")]);
    expect(second).toBe(first);
    expect(first.coordinatorId).toBe("loom.erase:A:1");
  });

  it("a later coordinator finishes an earlier one's intent that journaled no result", async () => {
    const w = world();
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    const { fetch } = await offloaded(w.app(), "a1");
    let fail = true;
    const flaky = Object.assign(Object.create(Object.getPrototypeOf(w.content)), w.content, {
      deleteIfUntouchedSince: async (address: string, cutoff: number) => {
        if (fail) throw new Error("disk unplugged");
        return w.content.deleteIfUntouchedSince!(address, cutoff);
      },
    });
    expect(String(await rejection(eraseSubject(w.app({ content: flaky }), "A")))).toMatch(/disk unplugged/);
    // The shred ran and the unsealed history is gone: only the first coordinator's intent still names the blob.
    expect(await w.stores.events.getExecution("a1")).toBeUndefined();
    fail = false;
    const result = await eraseSubject(w.app({ content: flaky }), "A");
    expect(result).toMatchObject({ coordinatorId: "loom.erase:A:2", contentDeleted: { deleted: 1, retained: 0 } });
    expect(await w.content.has(fetch!)).toBe(false);
  });
});

type Config = "sealed" | "plaintext";

/** A and B with archives and snapshots; in plaintext, B re-puts A's public2 blob right after the intent. */
async function erasure(config: Config) {
  const w = world({ crypto: config === "sealed" });
  const app = w.app();
  await runAgent(app, "a1", "A", ["fetch", "public2"]);
  await archive(app, "a1");
  await runAgent(app, "a2", "A", ["fetch"]);
  await runAgent(app, "b1", "B", ["fetch", "shared"]);
  const a = await offloaded(app, "a1");
  const b = await offloaded(app, "b1");
  const after =
    config === "plaintext"
      ? { type: ERASURE_CONTENT_DELETE_INTENDED, fired: false, run: () => runAgent(w.app(), "b2", "B", ["public2"]) }
      : undefined;
  return { w, a, b, after };
}

async function expectErased(
  config: Config,
  w: World,
  a: Record<string, string>,
  b: Record<string, string>,
  label: string,
) {
  expect(await w.stores.keys.isDestroyed("A"), label).toBe(true);
  expect(await w.content.has(a.fetch!), label).toBe(false);
  // public2 is A's alone at plan time; in plaintext B re-puts it concurrently: spared, and counted retained.
  expect(await w.content.has(a.public2!), label).toBe(config === "plaintext");
  const exported = await exportSubject(w.app(), "B");
  expect(
    exported.claimChecked.every((blob) => blob.value !== undefined),
    label,
  ).toBe(true);
  expect(exported.claimChecked.map((blob) => blob.address).sort(), label).toEqual(
    [b.fetch, b.shared, ...(config === "plaintext" ? [a.public2] : [])].sort(),
  );
  expect(await everything(w.stores), label).not.toContain(canaryOf("A"));
  const results = (
    await Promise.all(
      (await w.stores.events.listExecutions())
        .filter((i) => i.executionId.startsWith("loom.erase:A:"))
        .map((i) => w.stores.events.read(i.executionId)),
    )
  )
    .flat()
    .filter((r) => r.type === ERASURE_CONTENT_DELETED);
  expect(
    results.reduce((n, r) => n + (r.retained as number), 0),
    label,
  ).toBe(config === "plaintext" ? 1 : 0);
}

describe("crash the erase coordinator after each of its transitions: every retry ends erased", () => {
  for (const config of ["sealed", "plaintext"] as const) {
    it(`${config}: dying before or after any append of the coordinator, a fresh app's retry finishes the erasure`, async () => {
      const clean = await erasure(config);
      const counter = new CrashingEvents(clean.w.stores.events, {
        prefix: "loom.erase:",
        ...(clean.after ? { after: clean.after } : {}),
      });
      const expected = await eraseSubject(clean.w.app({ events: counter }), "A");
      await expectErased(config, clean.w, clean.a, clean.b, "clean run");
      expect(expected.contentDeleted).toEqual(
        config === "plaintext" ? { deleted: 1, retained: 1 } : { deleted: 2, retained: 0 },
      );
      expect(counter.counted).toBeGreaterThanOrEqual(8);
      for (let at = 1; at <= counter.counted; at++) {
        for (const mode of ["before", "after"] as const) {
          const label = `${config}: crash ${mode} append ${at}`;
          const { w, a, b, after } = await erasure(config);
          const plan = { prefix: "loom.erase:", ...(after ? { after } : {}) };
          const dying = new CrashingEvents(w.stores.events, { ...plan, at, mode });
          expect(await rejection(eraseSubject(w.app({ events: dying }), "A")), label).toBeInstanceOf(SimulatedCrash);
          const retry = await eraseSubject(w.app({ events: new CrashingEvents(w.stores.events, plan) }), "A");
          await expectErased(config, w, a, b, label);
          if (mode === "after" && at === counter.counted) {
            // The first attempt had finished: the retry is a second erase, a successful no-op.
            expect(retry, label).toMatchObject({
              coordinatorId: "loom.erase:A:2",
              alreadyErased: true,
              contentDeleted: { deleted: 0, retained: 0 },
            });
          } else {
            expect({ ...retry, intentSeq: 0 }, label).toEqual({ ...expected, intentSeq: 0 });
          }
          const again = await eraseSubject(w.app(), "A");
          expect(again.contentDeleted, label).toEqual({ deleted: 0, retained: 0 });
        }
      }
    });
  }
});

describe("after erasure", () => {
  it("no plaintext canary of the subject is readable anywhere in any store; its ciphertext fails authentication; a second erase is a successful no-op", async () => {
    const { w, a } = await erasure("sealed");
    const app = w.app();
    const before = await everything(w.stores);
    expect(before).not.toContain(canaryOf("A")); // sealed at rest from the start
    expect(
      (await exportSubject(app, "A")).claimChecked.some((blob) => JSON.stringify(blob.value).includes(canaryOf("A"))),
    ).toBe(true);
    await eraseSubject(app, "A");
    // Every record, archive segment, snapshot and blob byte.
    expect(await everything(w.stores)).not.toContain(canaryOf("A"));
    expect(await w.content.has(a.fetch!)).toBe(false);
    // The records are still there, and no key opens them.
    const raw = [
      ...(await w.stores.events.readArchives("a1")).flatMap((s) => s.records),
      ...(await w.stores.events.read("a1")),
    ];
    expect(raw.length).toBeGreaterThan(0);
    const otherKey = await w.stores.keys.getOrCreate("B");
    for (const key of [otherKey, crypto.getRandomValues(new Uint8Array(32))]) {
      expect(await rejection(openRecord(raw[0]!, key, "a1"))).toBeInstanceOf(RecordAuthenticationError);
    }
    expect(await rejection(app.log("a1"))).toBeInstanceOf(ExecutionErasedError);
    expect(await w.content.get(a.fetch!, { subject: "A" })).toBeUndefined();
    const second = await eraseSubject(app, "A");
    expect(second).toMatchObject({
      shredded: true,
      alreadyErased: true,
      contentDeleted: { deleted: 0, retained: 0 },
      coordinatorId: "loom.erase:A:2",
    });
  });

  it("a blob re-put concurrently by another execution is spared and counted retained", async () => {
    const { w, a, after } = await erasure("plaintext");
    const result = await eraseSubject(
      w.app({ events: new CrashingEvents(w.stores.events, { prefix: "loom.erase:", after: after! }) }),
      "A",
    );
    expect(after!.fired).toBe(true);
    expect(result.contentDeleted).toEqual({ deleted: 1, retained: 1 });
    expect(await w.content.has(a.public2!)).toBe(true);
    expect((await exportSubject(w.app(), "B")).claimChecked.find((blob) => blob.address === a.public2)).toMatchObject({
      citedBy: ["b2"],
      value: { dataset: "public2" },
    });
  });

  it("eraseSubject(subject, { events, keys, content }) erases over bare stores with the same coordinator", async () => {
    const w = world({ crypto: true });
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    const result = await eraseSubject("A", { events: w.stores.events, keys: w.stores.keys, content: w.content });
    expect(result).toMatchObject({ executions: ["a1"], shredded: true, contentDeleted: { deleted: 1, retained: 0 } });
    expect(await everything(w.stores)).not.toContain(canaryOf("A"));
  });
});

describe("property: a forged { __loomClaimCheck, ref, retain: true } in an unlisted tool's output, nested or at the top", () => {
  it("pins nothing (the sweep reclaims it past its TTL) and counts as no citation for erasure", async () => {
    const DAY = 86_400_000;
    await fc.assert(
      fc.asyncProperty(anyPath, async (path) => {
        // Erasure: B's lookalike does not keep A's blob.
        const e = world();
        await runAgent(e.app(), "a1", "A", ["fetch"]);
        const victim = (await offloaded(e.app(), "a1")).fetch!;
        e.outputs.set("B", plant(path, forgedEnvelope(victim)));
        await runAgent(e.app(), "b1", "B", ["note"]);
        await eraseSubject(e.app(), "A");
        expect(await e.content.has(victim)).toBe(false);
        // The sweep: once A's history is gone, B's lookalike holds the blob only for the TTL.
        const clock = simulatedClock(1_000);
        const s = world({ clock, snapshotEvery: false });
        await runAgent(s.app(), "a1", "A", ["fetch"]);
        const blob = (await offloaded(s.app(), "a1")).fetch!;
        s.outputs.set("B", plant(path, forgedEnvelope(blob)));
        await runAgent(s.app(), "b1", "B", ["note"]);
        await s.app().deleteHistory("a1");
        clock.advance(DAY);
        await sweep(s.app(), { ttlMs: DAY });
        expect(await s.content.has(blob)).toBe(false);
      }),
      { numRuns: 25 },
    );
  });
});
