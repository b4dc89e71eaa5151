// A snapshot file is written beside the appends, not in front of them: an append made while a snapshot
// is still being written (temp file, fsync, rename, directory fsync) is acknowledged without waiting for
// it, while putSnapshot still resolves only once its file is durable. Snapshot files land in seq order;
// deleteHistory and archive wait for one still on its way; a SIGKILL at any point loses no acknowledged
// record and leaves no snapshot ahead of its log.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores, type FsOps } from "../../adapters/fs/index.js";
import { nodeFsOps } from "../../adapters/fs/fsOps.js";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

/** fsOps whose fsync of a temp file of `dir` (a snapshot on its way), once armed, waits until `release()`; `reached` resolves when one does. */
function gatedSnapshotFsync(dir: string): {
  fsOps: Partial<FsOps>;
  arm(): void;
  reached: Promise<void>;
  release(): void;
  gated: () => number;
} {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let gated = 0;
  let armed = false;
  return {
    arm: () => (armed = true),
    reached,
    release: () => open(),
    gated: () => gated,
    fsOps: {
      async fsync(handle, path) {
        if (armed && path.startsWith(join(dir, "tmp"))) {
          gated++;
          reach();
          await gate;
        }
        await nodeFsOps.fsync(handle, path);
      },
    },
  };
}

const settled = (promise: Promise<unknown>) => {
  const state = { done: false };
  void promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
};

describe("fs snapshot writes beside appends", () => {
  it("acknowledges appends while a snapshot is still being written; the snapshot resolves once durable", async () => {
    const dir = await tempDir("snap-overlap");
    const gate = gatedSnapshotFsync(dir);
    const stores = await fsStores({ dir, fsOps: gate.fsOps });
    await stores.events.append("e", 0, [started(1)]);
    await stores.events.append("e", 1, [step(2)]);
    gate.arm();
    const snapshot = stores.events.putSnapshot("e", { seq: 2, at: 0, state: { through: 2 } });
    const snapshotState = settled(snapshot);
    await gate.reached;
    // The snapshot's temp file is written but not yet fsync'd: appends still go through, durable.
    for (let seq = 3; seq <= 6; seq++) await stores.events.append("e", seq - 1, [step(seq, { n: seq })]);
    expect(await stores.events.head("e")).toBe(6);
    expect(snapshotState.done).toBe(false);
    // The snapshot file is not in place yet: the old (absent) one is what a reader sees.
    expect(await stores.events.getSnapshot("e")).toBeUndefined();
    gate.release();
    await snapshot;
    expect(await stores.events.getSnapshot("e")).toEqual({ seq: 2, at: 0, state: { through: 2 } });
    await stores.close();

    const reopened = await fsStores({ dir });
    expect((await reopened.events.read("e")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await reopened.events.getSnapshot("e")).toEqual({ seq: 2, at: 0, state: { through: 2 } });
    expect(await reopened.events.read("e", 3)).toEqual([3, 4, 5, 6].map((seq) => step(seq, { n: seq })));
    await reopened.close();
  });

  it("lands snapshot files in seq order: a later one queued behind a slow one wins, an older one is refused", async () => {
    const dir = await tempDir("snap-order");
    const gate = gatedSnapshotFsync(dir);
    const stores = await fsStores({ dir, fsOps: gate.fsOps });
    await stores.events.append("e", 0, [started(1)]);
    for (let seq = 2; seq <= 5; seq++) await stores.events.append("e", seq - 1, [step(seq)]);
    gate.arm();
    const first = stores.events.putSnapshot("e", { seq: 3, at: 0, state: { through: 3 } });
    await gate.reached;
    const second = stores.events.putSnapshot("e", { seq: 5, at: 0, state: { through: 5 } });
    const older = stores.events.putSnapshot("e", { seq: 4, at: 0, state: { through: 4 } });
    await older; // refused at once (a newer one is on its way), without waiting for the slow write
    expect(gate.gated()).toBe(1); // the second waits for the first before it writes anything
    gate.release();
    await Promise.all([first, second]);
    expect(await stores.events.getSnapshot("e")).toEqual({ seq: 5, at: 0, state: { through: 5 } });
    await stores.close();
    const reopened = await fsStores({ dir });
    expect(await reopened.events.getSnapshot("e")).toEqual({ seq: 5, at: 0, state: { through: 5 } });
    await reopened.close();
  });

  it("deleteHistory and archive wait for a snapshot still on its way; the writer stays sound", async () => {
    const dir = await tempDir("snap-delete");
    const gate = gatedSnapshotFsync(dir);
    const stores = await fsStores({ dir, fsOps: gate.fsOps });
    for (const id of ["d", "a"]) {
      await stores.events.append(id, 0, [started(1)]);
      for (let seq = 2; seq <= 4; seq++) await stores.events.append(id, seq - 1, [step(seq)]);
    }
    gate.arm();
    const snapshot = stores.events.putSnapshot("d", { seq: 4, at: 0, state: {} });
    await gate.reached;
    const deleted = stores.events.deleteHistory("d");
    const deletedState = settled(deleted);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deletedState.done).toBe(false);
    gate.release();
    await Promise.all([snapshot, deleted]);
    expect(await stores.events.getExecution("d")).toBeUndefined();
    expect(await readdir(ExecutionPaths.of(dir, "d").dir).catch((error: NodeJS.ErrnoException) => error.code)).toBe(
      "ENOENT",
    );

    const slow = gatedSnapshotFsync(dir);
    await stores.close();
    const again = await fsStores({ dir, fsOps: slow.fsOps });
    slow.arm();
    const snap = again.events.putSnapshot("a", { seq: 3, at: 0, state: { through: 3 } });
    await slow.reached;
    const archived = again.events.archive("a", 2);
    const archivedState = settled(archived);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(archivedState.done).toBe(false);
    slow.release();
    await Promise.all([snap, archived]);
    // The writer did not fail: appends go on, and the snapshot reads back with its tail.
    await again.events.append("a", 4, [step(5)]);
    expect(await again.events.getSnapshot("a")).toEqual({ seq: 3, at: 0, state: { through: 3 } });
    expect((await again.events.read("a", 4)).map((r) => r.seq)).toEqual([4, 5]);
    await again.close();
  });

  it.each([60, 240])(
    "after a SIGKILL past %i acks with snapshots in flight, nothing acknowledged is lost and no snapshot is ahead of its log",
    async (acks) => {
      const dir = await tempDir("snap-crash");
      const child = spawnChild("overlapper.ts", [dir]);
      let stdout: string;
      try {
        stdout = await waitForOutput(
          child,
          (out) => out.split("\n").filter((l) => l.startsWith("ack ")).length >= acks,
        );
      } finally {
        await kill(child);
      }
      const last = (word: string) =>
        Math.max(
          0,
          ...stdout
            .split("\n")
            .filter((l) => l.startsWith(`${word} `))
            .map((l) => Number(l.split(" ")[1])),
        );
      const acked = last("ack");
      const snapped = last("snap");
      for (let open = 0; open < 2; open++) {
        const stores = await fsStores({ dir });
        const head = await stores.events.head("o");
        expect(head).toBeGreaterThanOrEqual(acked);
        expect((await stores.events.getExecution("o"))?.damaged).toBeUndefined();
        const whole = await stores.events.read("o");
        expect(whole.map((r) => r.seq)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
        const snapshot = await stores.events.getSnapshot("o");
        // Every resolved snapshot is durable (a newer one may have landed too); none is past the log's head.
        expect(snapshot?.seq ?? 0).toBeGreaterThanOrEqual(snapped);
        expect(snapshot?.seq ?? 0).toBeLessThanOrEqual(head);
        if (snapshot)
          expect(await stores.events.read("o", snapshot.seq + 1)).toEqual(whole.filter((r) => r.seq > snapshot.seq));
        await stores.close();
      }
    },
  );
});
