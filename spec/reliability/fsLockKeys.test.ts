// Campaign 12: the directory's lock and the subject keys. A stale lock whose pid now belongs to an
// unrelated live process (pid reuse, or a reboot) is taken over without a person; a live holder is still
// refused. A key file deleted without an erasure is an error on start and on read, naming the subject and
// the file, and no fresh key is ever minted in its place; the same holds on IndexedDB.
import "fake-indexeddb/auto";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { afterAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { entryName, pathExists } from "../../adapters/fs/directory.js";
import { fsStores } from "../../adapters/fs/index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { KeyMissingError, SubjectErasedError, WriterLockedError } from "../../stores/errors.js";
import type { Stores } from "../../stores/types.js";
import { kill, spawnChild, waitForOutput } from "../fs/helpers.js";
import { linesOf, pool, removeTempDirs, runChild, tempDir } from "./support.js";
import { eraseSubject, exportSubject } from "../../lifecycle.js";

afterAll(removeTempDirs);

const LOCK = "loomwork.lock";
const bootId = (): string => spawnSync("cat", ["/proc/sys/kernel/random/boot_id"], { encoding: "utf8" }).stdout.trim();
/** Field 22 of /proc/<pid>/stat (the start time in clock ticks since boot), read as the test sees it. */
const startTicks = async (pid: number): Promise<string> => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
};

/** An unrelated live process (not a loomwork writer): its pid is what a reused pid looks like. */
async function unrelatedProcess(): Promise<ChildProcess & { pid: number }> {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  return child as ChildProcess & { pid: number };
}

async function lockOf(dir: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dir, LOCK), "utf8")) as Record<string, unknown>;
}

async function refusal(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    (value: unknown) => {
      if (value && typeof (value as { close?: unknown }).close === "function")
        void (value as { close(): Promise<void> }).close();
      return undefined;
    },
    (error: unknown) => error,
  );
}

describe.runIf(process.platform === "linux")("the writer lock survives pid reuse (Linux /proc)", () => {
  it("records the holder's process start time and boot id beside its pid", async () => {
    const dir = await tempDir("lock-identity");
    const stores = await fsStores({ dir });
    const lock = await lockOf(dir);
    expect(lock).toMatchObject({
      pid: process.pid,
      hostname: hostname(),
      bootId: bootId(),
      processStart: `linux:${await startTicks(process.pid)}`,
    });
    await stores.close();
    expect(await pathExists(join(dir, LOCK))).toBe(false);
  });

  it("takes over a lock whose pid is alive but now belongs to an unrelated process (start time differs)", async () => {
    const dir = await tempDir("lock-reused");
    const sleeper = await unrelatedProcess();
    try {
      await writeFile(
        join(dir, LOCK),
        JSON.stringify({
          pid: sleeper.pid,
          hostname: hostname(),
          token: "old",
          acquiredAt: "2026-01-01T00:00:00.000Z",
          bootId: bootId(),
          processStart: "linux:1",
        }),
      );
      const stores = await fsStores({ dir });
      expect(await lockOf(dir)).toMatchObject({ pid: process.pid });
      expect((await lockOf(dir)).token).not.toBe("old");
      expect(sleeper.exitCode).toBeNull(); // the unrelated process was left alone
      await stores.events.append("e", 0, [{ seq: 1, at: 1, type: "loom.execution.started", logicId: "l" }]);
      expect(await stores.events.head("e")).toBe(1);
      await stores.close();
      expect((await readdir(dir)).filter((name) => name.startsWith(LOCK))).toEqual([]);
    } finally {
      await kill(sleeper);
    }
  });

  it("takes over a lock written before the last reboot (boot id differs), whatever its pid is now", async () => {
    const dir = await tempDir("lock-reboot");
    const sleeper = await unrelatedProcess();
    try {
      // The pid and even the start ticks match a live process, but the machine has rebooted since.
      const processStart = `linux:${await startTicks(sleeper.pid)}`;
      await writeFile(
        join(dir, LOCK),
        JSON.stringify({
          pid: sleeper.pid,
          hostname: hostname(),
          token: "old",
          acquiredAt: "",
          bootId: "0000-previous-boot",
          processStart,
        }),
      );
      const stores = await fsStores({ dir });
      expect(await lockOf(dir)).toMatchObject({ pid: process.pid, bootId: bootId() });
      await stores.close();
    } finally {
      await kill(sleeper);
    }
  });

  it("still refuses a lock whose pid, start time and boot id match a live process", async () => {
    const dir = await tempDir("lock-match");
    const sleeper = await unrelatedProcess();
    try {
      const processStart = `linux:${await startTicks(sleeper.pid)}`;
      await writeFile(
        join(dir, LOCK),
        JSON.stringify({
          pid: sleeper.pid,
          hostname: hostname(),
          token: "held",
          acquiredAt: "",
          bootId: bootId(),
          processStart,
        }),
      );
      const error = await refusal(fsStores({ dir }));
      expect(error).toBeInstanceOf(WriterLockedError);
      expect(error).toMatchObject({ code: "LOOM_WRITER_LOCKED", resource: dir });
      expect((await lockOf(dir)).token).toBe("held");
    } finally {
      await kill(sleeper);
    }
  });

  it("refuses a real live holder (a child process holding the directory) in this and another process", async () => {
    const dir = await tempDir("lock-live");
    const holder = spawnChild("holder.ts", [dir, "3"]);
    try {
      await waitForOutput(holder, (out) => out.includes("ready\n"));
      expect(await lockOf(dir)).toMatchObject({
        pid: holder.pid,
        bootId: bootId(),
        processStart: `linux:${await startTicks(holder.pid!)}`,
      });
      const error = await refusal(fsStores({ dir }));
      expect(error).toBeInstanceOf(WriterLockedError);
      expect(String((error as Error).cause)).toContain(`pid ${holder.pid}`);
      const other = JSON.parse(await waitForOutput(spawnChild("tryOpen.ts", [dir]), (out) => out.endsWith("\n")));
      expect(other).toMatchObject({ code: "LOOM_WRITER_LOCKED", resource: dir });
      expect((await lockOf(dir)).pid).toBe(holder.pid);
    } finally {
      await kill(holder);
    }
    const stores = await fsStores({ dir });
    expect(await stores.events.head("held")).toBe(3);
    await stores.close();
  });

  it("reads an old-format lock (pid only): dead pid taken over, live pid refused with the way out in the cause", async () => {
    const dir = await tempDir("lock-old");
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    await writeFile(join(dir, LOCK), JSON.stringify({ pid: dead, hostname: hostname(), token: "t", acquiredAt: "" }));
    const stores = await fsStores({ dir });
    expect(await lockOf(dir)).toMatchObject({ pid: process.pid });
    await stores.close();

    const sleeper = await unrelatedProcess();
    try {
      await writeFile(
        join(dir, LOCK),
        JSON.stringify({ pid: sleeper.pid, hostname: hostname(), token: "t", acquiredAt: "" }),
      );
      const error = await refusal(fsStores({ dir }));
      expect(error).toBeInstanceOf(WriterLockedError);
      expect(String((error as Error).cause)).toContain(join(dir, LOCK));
    } finally {
      await kill(sleeper);
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Keys

const loop = agentLoop$({ id: "sealed", model: "model", tools: ["fetch"], maxTurns: 3, warnTranscriptBytes: false });
const effects = () => ({
  model: createLlmEffect(scriptedModel([{ toolCalls: [{ toolName: "fetch", input: {} }] }, { text: "done" }])),
  fetch: createToolEffect(async () => ({ rows: ["secret row"] })),
});
const sealedApp = (stores: Stores) =>
  createApp(defineConfig({ stores, effects: effects(), logics: [loop], security: { crypto: { keys: stores.keys } } }));

/** One finished sealed execution "a1" of subject alice, and one of bob. */
async function sealHistory(stores: Stores): Promise<unknown> {
  const app = sealedApp(stores);
  await app.start(loop, { executionId: "a1", subject: "alice", input: { prompt: "hi" } });
  const output = await app.result("a1");
  await app.start(loop, { executionId: "b1", subject: "bob", input: { prompt: "hi" } });
  await app.result("b1");
  await app.close();
  return output;
}

function expectKeyMissing(error: unknown, location: string): void {
  expect(error).toBeInstanceOf(KeyMissingError);
  expect(error).toMatchObject({ code: "LOOM_KEY_MISSING", subject: "alice", location });
  expect((error as Error).message).toContain('"alice"');
  expect((error as Error).message).toContain(location);
  expect((error as Error).message).not.toMatch(/nothing was sealed/);
}

describe("a key file deleted without an erasure", () => {
  it("refuses the start (nothing written, no fresh key) and every read, naming the subject and the key file", async () => {
    const dir = await tempDir("key-deleted");
    const first = await fsStores({ dir });
    const output = await sealHistory(first);
    await first.close();
    const keyFile = join(dir, "keys", `${entryName("alice")}.key`);
    await unlink(keyFile);

    const stores = await fsStores({ dir });
    const app = sealedApp(stores);
    expectKeyMissing(
      await refusal(app.start(loop, { executionId: "a2", subject: "alice", input: { prompt: "again" } })),
      keyFile,
    );
    expect(await stores.events.head("a2")).toBe(0);
    expect(await stores.events.getExecution("a2")).toBeUndefined();
    expect(await pathExists(keyFile)).toBe(false);
    expectKeyMissing(await refusal(app.result("a1")), keyFile);
    expectKeyMissing(await refusal(app.log("a1")), keyFile);
    expectKeyMissing(await refusal(app.resume("a1")), keyFile);
    expectKeyMissing(await refusal(exportSubject(app, "alice")), keyFile);
    expectKeyMissing(await refusal(stores.keys.get("alice")), keyFile);
    expectKeyMissing(await refusal(stores.keys.getOrCreate("alice")), keyFile);
    expect(await stores.keys.isDestroyed("alice")).toBe(false);
    // Bob's key is intact and his data reads as before.
    expect(await app.result("b1")).toEqual(output);
    await app.close();
    await stores.close();

    // It stays loud on every later open, and no key file appears.
    const again = await fsStores({ dir });
    expectKeyMissing(
      await refusal(sealedApp(again).start(loop, { executionId: "a3", subject: "alice", input: { prompt: "x" } })),
      keyFile,
    );
    expect(await pathExists(keyFile)).toBe(false);
    await again.close();
  });

  it("offers the way out: restoring the key file reads again; erasing the subject acknowledges the loss", async () => {
    const dir = await tempDir("key-way-out");
    const first = await fsStores({ dir });
    const output = await sealHistory(first);
    await first.close();
    const keyFile = join(dir, "keys", `${entryName("alice")}.key`);
    const backup = await readFile(keyFile);
    await unlink(keyFile);

    let stores = await fsStores({ dir });
    expectKeyMissing(await refusal(sealedApp(stores).result("a1")), keyFile);
    await stores.close();
    await writeFile(keyFile, backup);
    stores = await fsStores({ dir });
    let app = sealedApp(stores);
    expect(await app.result("a1")).toEqual(output);
    await app.close();
    await stores.close();

    await unlink(keyFile);
    stores = await fsStores({ dir });
    app = createApp(
      defineConfig({
        stores,
        effects: effects(),
        logics: [loop],
        security: { crypto: { keys: stores.keys } },
        compliance: { erase: true },
      }),
    );
    await eraseSubject(app, "alice");
    expect(await stores.keys.isDestroyed("alice")).toBe(true);
    await expect(
      app.start(loop, { executionId: "a2", subject: "alice", input: { prompt: "x" } }),
    ).rejects.toBeInstanceOf(SubjectErasedError);
    await app.close();
    await stores.close();
  });

  it("guards keys created before this release too: the first open records them, a later loss is refused", async () => {
    const dir = await tempDir("key-old-dir");
    const first = await fsStores({ dir });
    await sealHistory(first);
    await first.close();
    // A directory written by an older loomwork has key files only.
    for (const name of await readdir(join(dir, "keys")))
      if (!name.endsWith(".key")) await unlink(join(dir, "keys", name));
    await (await fsStores({ dir })).close();
    const keyFile = join(dir, "keys", `${entryName("alice")}.key`);
    await unlink(keyFile);
    const stores = await fsStores({ dir });
    expectKeyMissing(
      await refusal(sealedApp(stores).start(loop, { executionId: "a2", subject: "alice", input: { prompt: "x" } })),
      keyFile,
    );
    await stores.close();
  });

  it("reading sealed records whose key store has no trace of the key is KeyMissingError, not an authentication error", async () => {
    const dir = await tempDir("key-dir-gone");
    const first = await fsStores({ dir });
    await sealHistory(first);
    await first.close();
    await rm(join(dir, "keys"), { recursive: true });
    const stores = await fsStores({ dir });
    const app = sealedApp(stores);
    const error = await refusal(app.result("a1"));
    expect(error).toBeInstanceOf(KeyMissingError);
    expect(error).toMatchObject({ code: "LOOM_KEY_MISSING", subject: "alice", executionId: "a1" });
    expect((error as Error).message).toContain('"alice"');
    expect((error as Error).message).toContain('"a1"');
    await app.close();
    await stores.close();
  });
});

// A child that opens the directory with every write numbered (writePoints), creates alice's key, prints it
// and closes; with a crash point it blocks there until SIGKILLed.
const here = (path: string) => JSON.stringify(fileURLToPath(new URL(path, import.meta.url)));
const KEY_CHILD = `
const { fsStores } = await import(${here("../../adapters/fs/index.ts")});
const { writePoints } = await import(${here("./children/writePoints.ts")});
const [dir, crashAt] = process.argv.slice(1);
const out = (line) => process.stdout.write(line + "\\n");
const { fsOps } = writePoints(dir, crashAt ? Number(crashAt) : undefined, out);
const stores = await fsStores({ dir, fsOps });
out("opened");
const key = await stores.keys.getOrCreate("alice");
out("key " + Buffer.from(key).toString("hex"));
await stores.close();
`;
const keyChild = (dir: string, crashAt?: number) =>
  runChild(
    spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", KEY_CHILD, dir, ...(crashAt ? [String(crashAt)] : [])],
      { stdio: ["ignore", "pipe", "pipe"] },
    ),
    {
      killWhen: (line) => line.startsWith("crash "),
    },
  );

describe("SIGKILL at every write point of a key's creation", () => {
  it("leaves a key with its record or no key at all: never a record without a key, never a key handed out and lost", async () => {
    const baselineDir = await tempDir("key-crash-baseline");
    const baseline = await keyChild(baselineDir);
    const lines = baseline.stdout.split("\n");
    const opened = lines.indexOf("opened");
    const handedOut = lines.findIndex((line) => line.startsWith("key "));
    // The write points between the open and the key being handed out: the key file, then its record.
    const points = lines.slice(opened + 1, handedOut).map((line) => Number(line.split(" ")[1]));
    expect(points.length).toBeGreaterThanOrEqual(8);
    expect(lines.slice(opened + 1, handedOut).filter((line) => line.includes(" rename "))).toEqual([
      `point ${points[2]} rename keys/${entryName("alice")}.key`,
      `point ${points[6]} rename keys/${entryName("alice")}.created`,
    ]);
    const outcomes = await pool([...points, points.at(-1)! + 1], 2, async (crashAt) => {
      const dir = await tempDir("key-crash");
      const run = await keyChild(dir, crashAt);
      expect(linesOf(run.stdout, "crash"), `crash at ${crashAt}`).toHaveLength(1);
      const handed = linesOf(run.stdout, "key")[0];
      const stores = await fsStores({ dir });
      const key = await stores.keys.get("alice"); // never KeyMissingError: no key was lost
      const files = (await readdir(join(dir, "keys"))).sort();
      await stores.close();
      if (handed !== undefined)
        expect(key && Buffer.from(key).toString("hex"), `crash at ${crashAt}: the handed-out key`).toBe(handed);
      if (key === undefined) {
        expect(files, `crash at ${crashAt}`).toEqual([]);
        return "no key";
      }
      expect(files, `crash at ${crashAt}: the open completes the record`).toEqual([
        `${entryName("alice")}.created`,
        `${entryName("alice")}.key`,
      ]);
      // From now on the key is guarded: deleting it is a typed refusal, not a fresh key.
      await unlink(join(dir, "keys", `${entryName("alice")}.key`));
      const after = await fsStores({ dir });
      expect(await refusal(after.keys.getOrCreate("alice")), `crash at ${crashAt}`).toBeInstanceOf(KeyMissingError);
      await after.close();
      return "key and record";
    });
    const noKey = outcomes.filter((o) => o === "no key").length;
    console.info(
      `[campaign 12] ${outcomes.length} SIGKILLs during a key's creation: ${noKey} left no key, ${outcomes.length - noKey} a key with its record; none a record without a key`,
    );
    expect(noKey).toBeGreaterThan(0);
    expect(outcomes.length - noKey).toBeGreaterThan(0);
  }, 120_000);
});

describe("a key row deleted from IndexedDB without an erasure", () => {
  it("refuses the start and the read, naming the subject and the database's key row", async () => {
    const indexedDB = new IDBFactory();
    const name = "keys-lost";
    const first = await indexedDbStores({ name, indexedDB, IDBKeyRange, locks: null });
    const output = await sealHistory(first);
    await first.close();
    // Delete alice's key row behind the store's back (devtools, a partial clear).
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open(name);
      request.onsuccess = () => {
        const db = request.result;
        const tx = db.transaction("keys", "readwrite");
        tx.objectStore("keys").delete("alice");
        tx.oncomplete = () => (db.close(), resolve());
        tx.onerror = () => reject(tx.error);
      };
      request.onerror = () => reject(request.error);
    });

    const stores = await indexedDbStores({ name, indexedDB, IDBKeyRange, locks: null });
    const app = sealedApp(stores);
    const location = `IndexedDB "${name}", object store "keys", key "alice"`;
    expectKeyMissing(
      await refusal(app.start(loop, { executionId: "a2", subject: "alice", input: { prompt: "x" } })),
      location,
    );
    expect(await stores.events.head("a2")).toBe(0);
    expectKeyMissing(await refusal(app.result("a1")), location);
    expectKeyMissing(await refusal(stores.keys.get("alice")), location);
    expect(await app.result("b1")).toEqual(output);
    await app.close();
    await stores.close();
  });
});
