// A failed fsync or write stops the writer for good; a reopen recovers what was durable.
import { readdir } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores, type FsOps } from "../../adapters/fs/index.js";
import { nodeFsOps } from "../../adapters/fs/fsOps.js";
import { ExecutionPaths } from "../../adapters/fs/journalFiles.js";
import { utf8 } from "../../stores/bytes.js";
import { StorageQuotaError, WriterFailedError } from "../../stores/errors.js";
import { ioError, removeTempDirs, started, step, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

describe("fs writer failure", () => {
  it("fails the writer on fsync EIO: the append rejects, every later write is refused, a reopen recovers", async () => {
    const dir = await tempDir("eio");
    let failFsync = false;
    let fsyncsAfterFailure = 0;
    const fsOps: Partial<FsOps> = {
      async fsync(handle, path) {
        if (failFsync) {
          fsyncsAfterFailure++;
          throw ioError("EIO");
        }
        await nodeFsOps.fsync(handle, path);
      },
    };
    const stores = await fsStores({ dir, fsOps });
    await stores.events.append("e", 0, [started(1)]);
    await stores.events.append("e", 1, [step(2)]);
    failFsync = true;
    const failed = await stores.events.append("e", 2, [step(3)]).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(WriterFailedError);
    expect(failed).toMatchObject({ code: "LOOM_WRITER_FAILED", cause: { code: "EIO" } });
    expect(fsyncsAfterFailure).toBe(1);

    failFsync = false; // the disk "recovers": the writer must still not carry on
    await expect(stores.events.append("e", 2, [step(3)])).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.events.append("other", 0, [started(1)])).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.events.putSnapshot("e", { seq: 2, at: 1, state: {} })).rejects.toBeInstanceOf(
      WriterFailedError,
    );
    await expect(stores.events.archive("e", 1)).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.events.deleteHistory("e")).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.content.put(utf8("blob"))).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.content.touchClock()).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.keys.getOrCreate("alice")).rejects.toBeInstanceOf(WriterFailedError);
    await expect(stores.keys.destroy("alice")).rejects.toBeInstanceOf(WriterFailedError);
    // Reads keep serving what was acknowledged.
    expect((await stores.events.read("e")).map((r) => r.seq)).toEqual([1, 2]);
    expect(await stores.events.head("e")).toBe(2);
    await stores.close();

    const reopened = await fsStores({ dir });
    const seqs = (await reopened.events.read("e")).map((r) => r.seq);
    expect(seqs.slice(0, 2)).toEqual([1, 2]); // seq 3 may or may not have reached the disk: it was never acknowledged
    const head = await reopened.events.head("e");
    await reopened.events.append("e", head, [step(head + 1)]);
    expect(await reopened.events.head("e")).toBe(head + 1);
    await reopened.close();
  });

  it("fails the writer on a write error; ENOSPC rejects as StorageQuotaError", async () => {
    const dir = await tempDir("enospc");
    let failWrite = false;
    const fsOps: Partial<FsOps> = {
      async write(handle, bytes, position, path) {
        if (failWrite) throw ioError("ENOSPC");
        await nodeFsOps.write(handle, bytes, position, path);
      },
    };
    const stores = await fsStores({ dir, fsOps });
    await stores.events.append("e", 0, [started(1)]);
    failWrite = true;
    await expect(stores.events.append("e", 1, [step(2)])).rejects.toBeInstanceOf(StorageQuotaError);
    failWrite = false;
    await expect(stores.events.append("e", 1, [step(2)])).rejects.toBeInstanceOf(WriterFailedError);
    await stores.close();
    const reopened = await fsStores({ dir });
    expect(await reopened.events.read("e")).toEqual([started(1)]);
    await reopened.close();
  });

  it("acknowledges nothing after the first I/O error: an fsync round in flight when another log's write fails rejects", async () => {
    const dir = await tempDir("failstop");
    const slow = ExecutionPaths.of(dir, "b").log;
    const failing = ExecutionPaths.of(dir, "a").log;
    let armed = false;
    let slowFsyncStarted: () => void = () => undefined;
    const fsyncing = new Promise<void>((resolve) => (slowFsyncStarted = resolve));
    const fsOps: Partial<FsOps> = {
      async fsync(handle, path) {
        await nodeFsOps.fsync(handle, path);
        if (armed && path === slow) {
          slowFsyncStarted();
          await new Promise((resolve) => setTimeout(resolve, 50)); // durable, but its round ends after the failure below
        }
      },
      async write(handle, bytes, position, path) {
        if (armed && path === failing) throw ioError("EIO");
        await nodeFsOps.write(handle, bytes, position, path);
      },
    };
    const stores = await fsStores({ dir, fsOps });
    await stores.events.append("a", 0, [started(1)]);
    await stores.events.append("b", 0, [started(1)]);
    armed = true;
    const order: string[] = [];
    const b = stores.events.append("b", 1, [step(2)]).then(
      () => order.push("b acknowledged"),
      (error: unknown) => (order.push("b rejected"), error),
    );
    await fsyncing;
    const a = await stores.events.append("a", 1, [step(2)]).then(
      () => "acknowledged",
      (error: unknown) => (order.push("a rejected"), error),
    );
    expect(a).toBeInstanceOf(WriterFailedError);
    // The writer failed while b's round was in flight: b is not acknowledged after it (its bytes may still be on disk).
    expect(await b).toBeInstanceOf(WriterFailedError);
    expect(order).toEqual(["a rejected", "b rejected"]);
    await stores.close();
    const reopened = await fsStores({ dir });
    expect((await reopened.events.read("a")).map((r) => r.seq)).toEqual([1]);
    expect((await reopened.events.read("b")).map((r) => r.seq)).toEqual([1, 2]); // b's round had made it durable
    await reopened.close();
  });

  it("survives a crash between writing an archive segment and rewriting the live log", async () => {
    const dir = await tempDir("archive");
    const log = ExecutionPaths.of(dir, "e").log;
    const fsOps: Partial<FsOps> = {
      async rename(from, to) {
        if (to === log) throw ioError("EIO"); // the segment is durable, the live log is not rewritten
        await nodeFsOps.rename(from, to);
      },
    };
    const stores = await fsStores({ dir, fsOps });
    await stores.events.append("e", 0, [started(1, "s"), step(2), step(3)]);
    await stores.events.append("e", 3, [step(4)]);
    await expect(stores.events.archive("e", 2)).rejects.toBeInstanceOf(WriterFailedError);
    await stores.close();

    const reopened = await fsStores({ dir });
    expect(await reopened.events.read("e")).toEqual([step(3), step(4)]);
    expect(await reopened.events.readArchives("e")).toEqual([
      { fromSeq: 1, toSeq: 2, records: [started(1, "s"), step(2)] },
    ]);
    expect(await reopened.events.getExecution("e")).toMatchObject({ subject: "s", head: 4 });
    await expect(reopened.events.archive("e", 2)).rejects.toBeInstanceOf(RangeError);
    await reopened.events.archive("e", 3);
    expect(await reopened.events.read("e")).toEqual([step(4)]);
    expect((await reopened.events.readArchives("e")).map((s) => [s.fromSeq, s.toSeq])).toEqual([
      [1, 2],
      [3, 3],
    ]);
    await reopened.close();
    const again = await fsStores({ dir });
    expect(await again.events.read("e")).toEqual([step(4)]);
    expect(await again.events.getExecution("e")).toMatchObject({ subject: "s", head: 4, startedAt: 1001 });
    expect(await readdir(ExecutionPaths.of(dir, "e").dir)).toEqual(
      expect.arrayContaining(["log", expect.stringMatching(/^seg-/)]),
    );
    await again.close();
  });
});
