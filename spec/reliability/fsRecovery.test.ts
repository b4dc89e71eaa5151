// fs recovery never deletes or silently cuts what was acknowledged (issue 13, "fs recovery"). Each test
// writes a real journal with the crash agent on fsStores, then cuts, flips or deletes its files between
// opens, as a disk, a backup tool or a person may, and checks what the next opens and the CLI report.
import { cp, mkdir, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import type { Warning } from "../../actors/bus.js";
import { defineConfig } from "../../actors/config.js";
import { fsStores, type FsStores } from "../../adapters/fs/index.js";
import { encodeJsonFrame, scanFrames } from "../../adapters/fs/framing.js";
import { encodeHeader, encodeSnapshot, ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { ConcurrencyError, JournalCorruptionError } from "../../stores/errors.js";
import { memoryStores } from "../../stores/memory.js";
import type { StoredRecord, StoredSnapshot } from "../../stores/types.js";
import { cli } from "../cli/support.js";
import { started, step } from "../conformance/suite.js";
import { ForwardingEventStore, withEvents } from "../support/harness.js";
import { kill, spawnChild as spawnFsChild, waitForOutput } from "../fs/helpers.js";
import {
  crashAgent,
  crashAgentEffects,
  EXECUTION_ID,
  removeTempDirs,
  runCrashAgent,
  tempDir,
  withoutTime,
} from "./support.js";
import { expandRecords } from "../../stores/recordFormat.js";

afterAll(removeTempDirs);

const TURNS = 3;
const checkpointOf = (dir: string) => join(dir, "catalogue.ckpt");
const pathsOf = (dir: string) => ExecutionPaths.of(dir, EXECUTION_ID);

interface Fixture {
  dir: string;
  result: unknown;
  log: StoredRecord[];
  /** Every snapshot the runtime put, in order. */
  snapshots: StoredSnapshot[];
}

/**
 * The crash agent run to its end on fsStores. Options: archive the records through `archiveThrough`;
 * replace the snapshot by the runtime's own snapshot at `snapshotSeq` (an unfinished state).
 */
async function agentJournal(
  label: string,
  options: { archiveThrough?: number; snapshotSeq?: number } = {},
): Promise<Fixture> {
  const dir = await tempDir(label);
  const stores = await fsStores({ dir });
  const snapshots: StoredSnapshot[] = [];
  const capturing = new (class extends ForwardingEventStore {
    override putSnapshot(id: string, snapshot: StoredSnapshot) {
      snapshots.push(structuredClone(snapshot));
      return this.inner.putSnapshot(id, snapshot);
    }
  })(stores.events);
  const { result, log } = await runCrashAgent(withEvents(stores, capturing), { turns: TURNS });
  if (options.archiveThrough) await stores.events.archive(EXECUTION_ID, options.archiveThrough);
  await stores.close();
  if (options.snapshotSeq !== undefined) {
    const snapshot = snapshots.find((s) => s.seq === options.snapshotSeq);
    if (!snapshot)
      throw new Error(`no snapshot at seq ${options.snapshotSeq}: ${snapshots.map((s) => s.seq).join(", ")}`);
    await writeFile(pathsOf(dir).snapshot, encodeSnapshot(EXECUTION_ID, snapshot));
  }
  return { dir, result, log, snapshots };
}

async function copyOf(fixture: Fixture, label: string): Promise<string> {
  const dir = await tempDir(label);
  await cp(fixture.dir, dir, { recursive: true });
  return dir;
}

/** The files of the execution's directory and their bytes. */
async function filesOf(dir: string): Promise<Map<string, string>> {
  const folder = pathsOf(dir).dir;
  const files = new Map<string, string>();
  for (const name of await readdir(folder).catch(() => [] as string[]))
    files.set(name, (await readFile(join(folder, name))).toString("hex"));
  return files;
}

function newApp(stores: FsStores, warnings: Warning[] = []) {
  return createApp(
    defineConfig({
      stores,
      effects: crashAgentEffects(TURNS, () => undefined),
      logics: [crashAgent(TURNS)],
      execution: { snapshotEvery: 6 },
      observability: { onWarn: (w) => warnings.push(w) },
    }),
  );
}

async function resumeError(stores: FsStores): Promise<unknown> {
  const app = newApp(stores);
  try {
    // A resume that recovers and then fails (an append refused) rejects its result.
    return await app
      .resume(EXECUTION_ID)
      .then(() => app.result(EXECUTION_ID))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
  } finally {
    await app.close();
  }
}

/** Frames of the live log: header first. */
async function framesOf(dir: string) {
  return scanFrames(await readFile(pathsOf(dir).log)).frames;
}

describe("fs recovery: nothing acknowledged is ever deleted or silently cut", () => {
  it("keeps an execution whose log was cut to 0 bytes, to 5 bytes, to its header, or deleted; lists it damaged and refuses read and resume naming the file, the offset and what survives", async () => {
    const fixture = await agentJournal("b1", { archiveThrough: 6 });
    const headerEnd = (await framesOf(fixture.dir))[0]!.end;
    const damages: [string, (log: string) => Promise<void>][] = [
      ["cut to 0 bytes", (log) => truncate(log, 0)],
      ["cut to 5 bytes", (log) => truncate(log, 5)],
      ["cut to its header", (log) => truncate(log, headerEnd)],
      ["deleted", (log) => rm(log)],
    ];
    for (const [what, damage] of damages) {
      for (const checkpoint of ["kept", "deleted"]) {
        const label = `log ${what}, checkpoint ${checkpoint}`;
        const dir = await copyOf(fixture, "b1-copy");
        const { log, snapshot } = pathsOf(dir);
        await damage(log);
        if (checkpoint === "deleted") await rm(checkpointOf(dir));
        const survivors = await filesOf(dir);
        for (let open = 1; open <= 3; open++) {
          const stores = await fsStores({ dir });
          try {
            const listed = (await stores.events.listExecutions()).find((e) => e.executionId === EXECUTION_ID);
            expect(listed, `${label}, open ${open}: still listed`).toBeDefined();
            // ADR 0008: the first open after the clean close trusts its checkpoint and finds the damage at the
            // execution's first use; a later open (the checkpoint keeps the damage), or one without the
            // checkpoint (every log recovered), lists it from the open on.
            if (open > 1 || checkpoint === "deleted")
              expect(listed!.damaged, `${label}, open ${open}: listed as damaged`).toMatchObject({ file: log });
            const error = await stores.events.read(EXECUTION_ID).catch((e: unknown) => e);
            expect(
              (await stores.events.getExecution(EXECUTION_ID))?.damaged,
              `${label}, open ${open}: damaged after the first read`,
            ).toMatchObject({ file: log });
            expect(error, label).toBeInstanceOf(JournalCorruptionError);
            const corruption = error as JournalCorruptionError;
            expect(corruption.file, label).toBe(log);
            expect(corruption.offset, label).toBeTypeOf("number");
            expect(corruption.survives, label).toMatchObject({
              snapshotSeq: fixture.log.length,
              archives: [{ fromSeq: 1, toSeq: 6 }],
            });
            expect(corruption.message, label).toContain(`a whole snapshot at seq ${fixture.log.length}`);
            expect(corruption.message, label).toContain("archive segments 1-6");
            const resumed = await resumeError(stores);
            expect(resumed, `${label}: resume refused`).toBeInstanceOf(JournalCorruptionError);
            await expect(
              stores.events.append(EXECUTION_ID, fixture.log.length, [step(fixture.log.length + 1)]),
              label,
            ).rejects.toBeInstanceOf(JournalCorruptionError);
            // The segment and the snapshot still read: they are what a restore starts from.
            expect(
              expandRecords((await stores.events.readArchives(EXECUTION_ID)).flatMap((s) => s.records)),
              label,
            ).toEqual(fixture.log.slice(0, 6));
          } finally {
            await stores.close();
          }
          // Nothing was deleted or rewritten: the snapshot, the segment and what is left of the log.
          expect(await filesOf(dir), `${label}, after open ${open}`).toEqual(survivors);
        }
        expect((await stat(snapshot)).size).toBeGreaterThan(0);
      }
    }
  });

  it("shows a damaged execution in `loomwork ls`, and `log` / `stats` name the file, the offset and what survives", async () => {
    const fixture = await agentJournal("b1-cli", { archiveThrough: 6 });
    const dir = await copyOf(fixture, "b1-cli-copy");
    await rm(pathsOf(dir).log);
    const ls = await cli(["ls", "--dir", dir]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(new RegExp(`^${EXECUTION_ID} .*damaged`, "m"));
    const lsJson = await cli(["ls", "--dir", dir, "--json"]);
    expect(JSON.parse(lsJson.stdout)).toEqual([
      expect.objectContaining({
        executionId: EXECUTION_ID,
        damaged: expect.objectContaining({ kind: "missing", file: pathsOf(dir).log }),
      }),
    ]);
    const damagedOnly = await cli(["ls", "--dir", dir, "--status", "damaged"]);
    expect(damagedOnly.code, damagedOnly.stderr).toBe(0);
    expect(damagedOnly.stdout).toContain(EXECUTION_ID);
    const log = await cli(["log", EXECUTION_ID, "--dir", dir]);
    expect(log.code).toBe(4);
    expect(log.stderr).toContain(pathsOf(dir).log);
    expect(log.stderr).toContain("byte offset 0");
    expect(log.stderr).toContain(`a whole snapshot at seq ${fixture.log.length}`);
    const stats = await cli(["stats", "--dir", dir]);
    expect(stats.stdout).toContain("LOOM_JOURNAL_CORRUPT");
    expect(stats.stdout).toContain("archive segments 1-6");
  });

  it("keeps one flipped byte in the last frame a JournalCorruptionError on every later open: no close, checkpoint or retry truncates it", async () => {
    const fixture = await agentJournal("b2");
    const { log } = pathsOf(fixture.dir);
    const bytes = await readFile(log);
    const last = (await framesOf(fixture.dir)).at(-1)!;
    expect((last.value as StoredRecord[]).at(-1)!.type).toBe("loom.execution.ended");
    const damaged = Buffer.from(bytes);
    damaged[last.offset + 12]! ^= 0x01;
    await writeFile(log, damaged);
    for (let open = 1; open <= 4; open++) {
      const stores = await fsStores({ dir: fixture.dir });
      try {
        await expect(stores.events.read(EXECUTION_ID), `open ${open}`).rejects.toMatchObject({
          file: log,
          offset: last.offset,
          code: "LOOM_JOURNAL_CORRUPT",
        });
        expect(await resumeError(stores), `open ${open}`).toBeInstanceOf(JournalCorruptionError);
        expect((await stores.events.getExecution(EXECUTION_ID))?.damaged, `open ${open}`).toMatchObject({
          kind: "frame",
          offset: last.offset,
        });
      } finally {
        await stores.close();
      }
      expect(await readFile(log), `open ${open}: the log is left as it was`).toEqual(damaged);
    }
    // The way out: restore the file (here: its bytes before the flip). The next open rescans it, whole.
    await writeFile(log, bytes);
    const restored = await fsStores({ dir: fixture.dir });
    try {
      expect((await restored.events.getExecution(EXECUTION_ID))?.damaged).toBeUndefined();
      expect(withoutTime(expandRecords(await restored.events.read(EXECUTION_ID)))).toEqual(withoutTime(fixture.log));
    } finally {
      await restored.close();
    }
  });

  it("takes every byte as acknowledged when catalogue.ckpt itself is damaged: a flipped last frame is reported, not truncated", async () => {
    const fixture = await agentJournal("b2-ckpt");
    const other = await fsStores({ dir: fixture.dir });
    await other.events.append("healthy", 0, [started(1)]);
    await other.close();
    const { log } = pathsOf(fixture.dir);
    const last = (await framesOf(fixture.dir)).at(-1)!;
    const damaged = await readFile(log);
    damaged[last.offset + 12]! ^= 0x01;
    await writeFile(log, damaged);
    const checkpoint = await readFile(checkpointOf(fixture.dir));
    checkpoint[checkpoint.length - 5]! ^= 0x01;
    await writeFile(checkpointOf(fixture.dir), checkpoint);
    for (let open = 1; open <= 2; open++) {
      const stores = await fsStores({ dir: fixture.dir });
      try {
        expect((await stores.events.getExecution(EXECUTION_ID))?.damaged, `open ${open}`).toMatchObject({
          kind: "frame",
          offset: last.offset,
        });
        expect(await stores.events.read("healthy")).toEqual([started(1)]);
      } finally {
        await stores.close();
      }
      expect(await readFile(log), `open ${open}`).toEqual(damaged);
    }
  });

  it("reports a log cut below the size the catalogue checkpoint recorded as durable, at a frame boundary or inside a frame", async () => {
    const fixture = await agentJournal("b3");
    const frames = await framesOf(fixture.dir);
    const last = frames.at(-1)!;
    for (const cut of [last.offset, last.offset + 5, frames[2]!.offset]) {
      const dir = await copyOf(fixture, "b3-copy");
      const { log } = pathsOf(dir);
      await truncate(log, cut);
      for (let open = 1; open <= 2; open++) {
        const stores = await fsStores({ dir });
        try {
          // ADR 0008: after the clean close the first open finds the cut at the first read; the second at open.
          if (open > 1)
            expect(
              (await stores.events.getExecution(EXECUTION_ID))?.damaged,
              `cut at ${cut}, open ${open}: at open`,
            ).toMatchObject({ kind: "cut", file: log, offset: cut });
          const error = (await stores.events.read(EXECUTION_ID).catch((e: unknown) => e)) as JournalCorruptionError;
          expect(error).toBeInstanceOf(JournalCorruptionError);
          expect(error).toMatchObject({ kind: "cut", offset: cut });
          expect(error.message).toContain(`${last.end} bytes`);
          const info = await stores.events.getExecution(EXECUTION_ID);
          expect(info?.damaged, `cut at ${cut}, open ${open}`).toMatchObject({ kind: "cut", file: log, offset: cut });
        } finally {
          await stores.close();
        }
        expect((await stat(log)).size, `cut at ${cut}: nothing more was truncated`).toBe(cut);
      }
    }
  });

  it("after a real SIGKILL, truncates only what lies past the checkpoint's durable size; a cut below it is reported", async () => {
    const dir = await tempDir("b3-kill");
    // spec/fs/children/appender.ts: three executions appending forever, a checkpoint every 40 appends.
    const child = spawnFsChild("appender.ts", [dir]);
    try {
      await waitForOutput(child, (out) => out.split("\n").filter((l) => l.startsWith("ack ")).length >= 300);
    } finally {
      await kill(child);
    }
    const checkpointed = await fsStores({ dir });
    const heads = new Map<string, number>();
    for (const id of ["a", "b", "c"]) heads.set(id, await checkpointed.events.head(id));
    for (const id of ["a", "b", "c"]) expect((await checkpointed.events.getExecution(id))?.damaged, id).toBeUndefined();
    await checkpointed.close();
    // The close checkpointed the full size of each log: a cut of the last frame is now acknowledged data lost.
    const log = ExecutionPaths.of(dir, "b").log;
    const frames = scanFrames(await readFile(log)).frames;
    await truncate(log, frames.at(-1)!.offset);
    const reopened = await fsStores({ dir });
    try {
      // The damage was made after a clean close (ADR 0008): the first read of "b" finds it.
      await expect(reopened.events.read("b")).rejects.toMatchObject({ kind: "cut", file: log });
      expect(await reopened.events.getExecution("b")).toMatchObject({ damaged: { kind: "cut" } });
      for (const id of ["a", "c"]) expect((await reopened.events.read(id)).length).toBe(heads.get(id));
    } finally {
      await reopened.close();
    }
  });

  it("diagnoses a log cut below its snapshot's seq as a JournalCorruptionError (behind-snapshot), not a ConcurrencyError; removing the snapshot resumes from the log", async () => {
    const fixture = await agentJournal("b4", { snapshotSeq: 6 });
    const frames = await framesOf(fixture.dir);
    const cutAt = frames.find((f) => Array.isArray(f.value) && (f.value as StoredRecord[]).some((r) => r.seq === 5))!;
    const { log, snapshot } = pathsOf(fixture.dir);
    await truncate(log, cutAt.offset); // the log now ends at seq 4, a whole frame boundary
    await rm(checkpointOf(fixture.dir)); // nothing recorded the durable size: only the snapshot knows
    for (let open = 1; open <= 2; open++) {
      const stores = await fsStores({ dir: fixture.dir });
      try {
        const error = await resumeError(stores);
        expect(error, `open ${open}`).not.toBeInstanceOf(ConcurrencyError);
        expect(error, `open ${open}`).toBeInstanceOf(JournalCorruptionError);
        expect(error).toMatchObject({ kind: "behind-snapshot", file: log });
        expect((error as Error).message).toContain("seq 6");
        expect((error as Error).message).toContain(snapshot);
        expect((await stores.events.getExecution(EXECUTION_ID))?.damaged).toMatchObject({ kind: "behind-snapshot" });
      } finally {
        await stores.close();
      }
    }
    // The documented way out (docs/storage.md, "Recovery"): accept the loss by removing the snapshot.
    await rm(snapshot);
    const stores = await fsStores({ dir: fixture.dir });
    try {
      const app = newApp(stores);
      await app.resume(EXECUTION_ID);
      expect(await app.result(EXECUTION_ID)).toEqual(fixture.result);
      expect(withoutTime(await app.log(EXECUTION_ID))).toEqual(withoutTime(fixture.log));
      await app.close();
    } finally {
      await stores.close();
    }
  });

  it("diagnoses a log behind its snapshot on any adapter (memory stores): JournalCorruptionError behind-snapshot, not ConcurrencyError", async () => {
    const stores = memoryStores();
    const { log } = await runCrashAgent(stores, { turns: TURNS });
    // The log "lost" its records after seq 4 while the snapshot (seq 13) had seen them.
    const truncated = new (class extends ForwardingEventStore {
      override async read(id: string, from?: number) {
        return (await this.inner.read(id, from)).filter((r) => r.seq <= 4);
      }
      override async head() {
        return 4;
      }
      override async getExecution(id: string) {
        const info = await this.inner.getExecution(id);
        return info && { ...info, head: 4 };
      }
    })(stores.events);
    const app = createApp(
      defineConfig({
        stores: withEvents(stores, truncated),
        effects: crashAgentEffects(TURNS, () => undefined),
        logics: [crashAgent(TURNS)],
      }),
    );
    try {
      const error = await app.resume(EXECUTION_ID).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(JournalCorruptionError);
      expect(error).toMatchObject({ kind: "behind-snapshot" });
      expect((error as Error).message).toContain(`seq ${log.length}`);
    } finally {
      await app.close();
    }
  });

  it("refuses the resume of a deleted log with JournalCorruptionError even when only its snapshot is left (no checkpoint, no segment)", async () => {
    const fixture = await agentJournal("b1-bare");
    await rm(pathsOf(fixture.dir).log);
    await rm(checkpointOf(fixture.dir));
    const stores = await fsStores({ dir: fixture.dir });
    try {
      expect((await stores.events.getExecution(EXECUTION_ID))?.damaged).toMatchObject({ kind: "missing" });
      const error = await resumeError(stores);
      expect(error).toBeInstanceOf(JournalCorruptionError);
      expect((error as Error).message).toContain(`a whole snapshot at seq ${fixture.log.length}`);
    } finally {
      await stores.close();
    }
  });

  it("keeps a damaged execution whose id is too long for its folder name, naming it from its segment", async () => {
    const dir = await tempDir("b1-long");
    const id = `long-${"é".repeat(120)}`; // over 100 UTF-8 bytes: stored under h<sha256>
    const stores = await fsStores({ dir });
    await stores.events.append(id, 0, [started(1)]);
    await stores.events.append(id, 1, [step(2)]);
    await stores.events.archive(id, 1);
    await stores.close();
    await rm(ExecutionPaths.of(dir, id).log);
    await rm(checkpointOf(dir));
    const reopened = await fsStores({ dir });
    try {
      expect(await reopened.events.listExecutions()).toEqual([
        expect.objectContaining({ executionId: id, damaged: expect.objectContaining({ kind: "missing" }) }),
      ]);
      expect((await reopened.events.readArchives(id)).flatMap((s) => s.records)).toEqual([started(1)]);
    } finally {
      await reopened.close();
    }
  });

  it("lets a damaged execution be given up with app.deleteHistory, the documented way out when there is no backup", async () => {
    const fixture = await agentJournal("b1-delete", { archiveThrough: 6 });
    await rm(pathsOf(fixture.dir).log);
    const stores = await fsStores({ dir: fixture.dir });
    try {
      // The log was deleted after a clean close (ADR 0008): the resume that meets it reports it.
      expect(await resumeError(stores)).toMatchObject({ kind: "missing" });
      expect((await stores.events.getExecution(EXECUTION_ID))?.damaged).toMatchObject({ kind: "missing" });
      const app = newApp(stores);
      await app.deleteHistory(EXECUTION_ID);
      await app.close();
      expect(await stores.events.getExecution(EXECUTION_ID)).toBeUndefined();
    } finally {
      await stores.close();
    }
    expect(await readdir(join(fixture.dir, "executions"))).toEqual([]);
    const reopened = await fsStores({ dir: fixture.dir });
    expect(await reopened.events.listExecutions()).toEqual([]);
    await reopened.close();
  });

  it("falls back to replaying the log when the snapshot fails its checksum, warns LOOM_SNAPSHOT_DAMAGED, and resumes to the same output", async () => {
    for (const archiveThrough of [undefined, 6]) {
      const fixture = await agentJournal("b5", { snapshotSeq: 6, ...(archiveThrough ? { archiveThrough } : {}) });
      const { snapshot } = pathsOf(fixture.dir);
      const bytes = await readFile(snapshot);
      bytes[Math.floor(bytes.length / 2)]! ^= 0x20;
      await writeFile(snapshot, bytes);
      const stores = await fsStores({ dir: fixture.dir });
      try {
        const warnings: Warning[] = [];
        const app = newApp(stores, warnings);
        await app.resume(EXECUTION_ID);
        expect(await app.result(EXECUTION_ID)).toEqual(fixture.result);
        expect(withoutTime(await app.log(EXECUTION_ID))).toEqual(withoutTime(fixture.log));
        expect(
          warnings.filter((w) => w.code === "LOOM_SNAPSHOT_DAMAGED"),
          `archived through ${archiveThrough}`,
        ).toEqual([expect.objectContaining({ executionId: EXECUTION_ID, file: snapshot })]);
        expect(app.stats).toBeDefined();
        await app.close();
      } finally {
        await stores.close();
      }
    }
  });

  it("refuses the resume when the snapshot is damaged and nothing whole covers the history (its archive segment is damaged too)", async () => {
    const fixture = await agentJournal("b5-none", { snapshotSeq: 6, archiveThrough: 6 });
    const { snapshot } = pathsOf(fixture.dir);
    const segment = pathsOf(fixture.dir).segment(1, 6);
    for (const file of [snapshot, segment]) {
      const bytes = await readFile(file);
      bytes[bytes.length - 3]! ^= 0x20;
      await writeFile(file, bytes);
    }
    const stores = await fsStores({ dir: fixture.dir });
    try {
      const error = await resumeError(stores);
      expect(error).toBeInstanceOf(JournalCorruptionError);
      expect((error as Error).message).toContain(snapshot);
    } finally {
      await stores.close();
    }
  });

  it("recovers two pipelined unsynced appends of which only the later persisted: truncates at the hole past the durable size and keeps the cut bytes aside", async () => {
    const dir = await tempDir("b7");
    const stores = await fsStores({ dir });
    await stores.events.append("e", 0, [started(1)]);
    await stores.events.append("e", 1, [step(2)]);
    await stores.close(); // the checkpoint records the log's durable size
    const log = ExecutionPaths.of(dir, "e").log;
    const durable = (await readFile(log)).length;
    // Two later appends were in flight at the crash: the first never reached the disk (reads as zeros), the second did.
    const lost = encodeJsonFrame([step(3)]);
    const persisted = encodeJsonFrame([step(4)]);
    await writeFile(log, Buffer.concat([await readFile(log), Buffer.alloc(lost.length), persisted]));
    const reopened = await fsStores({ dir });
    try {
      expect(await reopened.events.read("e")).toEqual([started(1), step(2)]);
      expect((await reopened.events.getExecution("e"))?.damaged).toBeUndefined();
      await reopened.events.append("e", 2, [step(3, "again")]);
      expect((await reopened.events.read("e")).map((r) => r.seq)).toEqual([1, 2, 3]);
    } finally {
      await reopened.close();
    }
    // The cut bytes hold a readable frame: they are kept in recovered/, not deleted.
    const kept = await readdir(join(dir, "recovered"));
    expect(kept).toEqual([
      expect.stringMatching(new RegExp(`^${ExecutionPaths.of(dir, "e").name}-[0-9a-f]+-${durable}$`)),
    ]);
    const tail = await readFile(join(dir, "recovered", kept[0]!));
    expect(tail).toEqual(Buffer.concat([Buffer.alloc(lost.length), persisted]));
    expect(durable).toBeGreaterThan(0);
  });

  it("forgets an execution whose first write was lost while its second persisted (never acknowledged), keeping the readable bytes in recovered/", async () => {
    const dir = await tempDir("b7-first");
    await (await fsStores({ dir })).close();
    const paths = ExecutionPaths.of(dir, "e");
    await mkdir(paths.dir, { recursive: true });
    const second = encodeJsonFrame([step(2)]);
    const bytes = Buffer.concat([
      Buffer.alloc(encodeHeader("e", 0, null).length + encodeJsonFrame([started(1)]).length),
      second,
    ]);
    await writeFile(paths.log, bytes);
    const stores = await fsStores({ dir });
    try {
      expect(await stores.events.listExecutions()).toEqual([]);
      await stores.events.append("e", 0, [started(1)]);
      expect(await stores.events.read("e")).toEqual([started(1)]);
    } finally {
      await stores.close();
    }
    expect(await readFile(join(dir, "recovered", `${paths.name}-none-0`))).toEqual(bytes);
  });

  it("still reports the same hole as corruption when it lies before the durable size", async () => {
    const dir = await tempDir("b7-durable");
    const stores = await fsStores({ dir });
    await stores.events.append("e", 0, [started(1)]);
    for (let seq = 2; seq <= 4; seq++) await stores.events.append("e", seq - 1, [step(seq)]);
    await stores.close();
    const log = ExecutionPaths.of(dir, "e").log;
    const bytes = await readFile(log);
    const victim = scanFrames(bytes).frames[3]!; // seq 3, acknowledged and checkpointed
    bytes.fill(0, victim.offset, victim.end);
    await writeFile(log, bytes);
    const reopened = await fsStores({ dir });
    try {
      await expect(reopened.events.read("e")).rejects.toMatchObject({
        file: log,
        offset: victim.offset,
        kind: "frame",
      });
    } finally {
      await reopened.close();
    }
    expect(await readFile(log)).toEqual(bytes);
  });
});
