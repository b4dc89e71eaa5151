// Group commit: appends that arrive while an fsync is in flight share the next one, and no append
// resolves before an fsync that started after its bytes were written.
import { afterAll, describe, expect, it } from "vitest";
import { fsStores, type FsOps } from "../../adapters/fs/index.js";
import { encodeJsonFrame } from "../../adapters/fs/framing.js";
import { nodeFsOps } from "../../adapters/fs/fsOps.js";
import { removeTempDirs, started, step, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("fs group commit", () => {
  it("makes 200 concurrent appends durable with far fewer fsyncs", async () => {
    const dir = await tempDir("group");
    let fsyncs = 0;
    // A disk that takes 5 ms per fsync: appends keep arriving while one is in flight.
    const fsOps: Partial<FsOps> = {
      async fsync(handle, path) {
        fsyncs++;
        await sleep(5);
        await nodeFsOps.fsync(handle, path);
      },
    };
    const stores = await fsStores({ dir, fsOps });
    const executions = ["a", "b", "c", "d"];
    await Promise.all(executions.map((id) => stores.events.append(id, 0, [started(1)])));
    fsyncs = 0;
    const appends = executions.flatMap((id) =>
      Array.from({ length: 50 }, (_, i) => stores.events.append(id, i + 1, [step(i + 2)])),
    );
    await Promise.all(appends);
    expect(fsyncs).toBeGreaterThan(0);
    expect(fsyncs).toBeLessThan(200 / 10);
    for (const id of executions) {
      expect((await stores.events.read(id)).map((r) => r.seq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
      expect(await stores.events.head(id)).toBe(51);
    }
    await stores.close();
  });

  it("resolves each append only after an fsync that started once its bytes were written", async () => {
    const dir = await tempDir("order");
    const writeEnds = new Map<string, number[]>();
    const syncedThrough = new Map<string, number>();
    let gate: Promise<void> = Promise.resolve();
    const fsOps: Partial<FsOps> = {
      async write(handle, bytes, position, path) {
        await nodeFsOps.write(handle, bytes, position, path);
        writeEnds.set(path, [...(writeEnds.get(path) ?? []), position + bytes.length]);
      },
      async fsync(handle, path) {
        const through = Math.max(0, ...(writeEnds.get(path) ?? []));
        await gate;
        await nodeFsOps.fsync(handle, path);
        syncedThrough.set(path, Math.max(syncedThrough.get(path) ?? 0, through));
      },
    };
    const stores = await fsStores({ dir, fsOps });
    await stores.events.append("e", 0, [started(1)]);
    const log = [...writeEnds.keys()].find((p) => p.endsWith("log"))!;

    // Where each append's bytes end in the log: one frame per append, in call order.
    const records = Array.from({ length: 20 }, (_, i) => step(i + 2));
    const ends: number[] = [];
    for (const record of records)
      ends.push((ends.at(-1) ?? writeEnds.get(log)!.at(-1)!) + encodeJsonFrame([record]).length);

    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    let resolved = 0;
    const pending = records.map((record, i) =>
      stores.events.append("e", i + 1, [record]).then(() => {
        expect(syncedThrough.get(log)).toBeGreaterThanOrEqual(ends[i]!);
        resolved++;
      }),
    );
    await sleep(50);
    expect(resolved).toBe(0);
    expect(await stores.events.head("e")).toBe(1);
    open();
    await Promise.all(pending);
    expect(resolved).toBe(20);
    expect(await stores.events.head("e")).toBe(21);
    await stores.close();
  });

  it("keeps the seq fence exact between pipelined appends of one execution", async () => {
    const dir = await tempDir("fence");
    const stores = await fsStores({ dir });
    await stores.events.append("e", 0, [started(1)]);
    const results = await Promise.allSettled([
      stores.events.append("e", 1, [step(2, "first")]),
      stores.events.append("e", 2, [step(3, "follows")]),
      stores.events.append("e", 1, [step(2, "stale")]),
      stores.events.append("e", 3, [step(4, "follows too")]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({
      code: "LOOM_CONCURRENCY",
      expected: 1,
      actual: 3,
    });
    expect((await stores.events.read("e")).map((r) => r.output)).toEqual([
      undefined,
      "first",
      "follows",
      "follows too",
    ]);
    await stores.close();
  });

  it("writes small and large frames whole, each at its offset after the one before", async () => {
    const dir = await tempDir("writes");
    const stores = await fsStores({ dir });
    await stores.events.append("w", 0, [started(1)]);
    // 1 KiB and 1 MiB outputs, read back through a reopen (every frame's length and checksum checked).
    const small = "s".repeat(1024);
    const large = "L".repeat(1024 * 1024);
    await stores.events.append("w", 1, [step(2, small)]);
    await stores.events.append("w", 2, [step(3, large)]);
    await stores.events.append("w", 3, [step(4, small)]);
    await stores.close();
    const reopened = await fsStores({ dir });
    expect((await reopened.events.read("w")).map((r) => r.output)).toEqual([undefined, small, large, small]);
    await reopened.close();
  });
});
