// fsStores({ dir, readOnly: true }): a reader beside the directory's writer (another live process), which
// takes no lock, repairs nothing, reads up to the last whole frame and refuses every write.
import { appendFile, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { entryName } from "../../adapters/fs/directory.js";
import { ReadOnlyStoreError } from "../../stores/errors.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

const logOf = (dir: string, executionId: string) => join(dir, "executions", entryName(executionId), "log");

describe("fs stores opened read-only", () => {
  it("read a journal another live process holds, without its lock, and leave an in-flight tail untouched", async () => {
    const dir = await tempDir("ro-beside");
    const holder = spawnChild("holder.ts", [dir, "12"]);
    try {
      await waitForOutput(holder, (out) => out.includes("ready\n"));
      // The writer's next append, caught half written: a torn frame at the end of its log.
      const log = logOf(dir, "held");
      await appendFile(log, Buffer.from([0x40, 0, 0, 0, 0x7b, 0x22]));
      const before = await readFile(log);
      const lock = await readFile(join(dir, "loomwork.lock"), "utf8");
      const reader = await fsStores({ dir, readOnly: true });
      try {
        expect(await reader.events.listExecutions()).toMatchObject([
          { executionId: "held", head: 12, status: "running" },
        ]);
        expect((await reader.events.read("held")).map((r) => r.seq)).toEqual(
          Array.from({ length: 12 }, (_, i) => i + 1),
        );
      } finally {
        await reader.close();
      }
      // Nothing of the writer's was touched: the torn bytes, the lock, no checkpoint, tmp or recovered/ made.
      expect(await readFile(log)).toEqual(before);
      expect(await readFile(join(dir, "loomwork.lock"), "utf8")).toBe(lock);
      expect((await readdir(dir)).sort()).not.toContain("recovered");
    } finally {
      await kill(holder);
    }
  });

  it("refuse every write with ReadOnlyStoreError and create nothing", async () => {
    const dir = await tempDir("ro-writes");
    const writer = await fsStores({ dir });
    await writer.events.append("x", 0, [started(1), step(2)]);
    const address = await writer.content.put(new TextEncoder().encode("blob"));
    await writer.keys.getOrCreate("user-1");
    await writer.close();
    const entries = async () => (await readdir(dir, { recursive: true })).sort();
    const listed = await entries();
    const reader = await fsStores({ dir, readOnly: true });
    try {
      const refusals = await Promise.all([
        reader.events.append("x", 2, [step(3)]).catch((e: unknown) => e),
        reader.events.append("y", 0, [started(1)]).catch((e: unknown) => e),
        reader.events.putSnapshot("x", { seq: 2, at: 0, state: {} }).catch((e: unknown) => e),
        reader.events.deleteHistory("x").catch((e: unknown) => e),
        reader.content.put(new TextEncoder().encode("other")).catch((e: unknown) => e),
        reader.content.delete(address).catch((e: unknown) => e),
        reader.keys.getOrCreate("user-2").catch((e: unknown) => e),
        reader.keys.destroy("user-1").catch((e: unknown) => e),
      ]);
      for (const refusal of refusals) expect(refusal).toBeInstanceOf(ReadOnlyStoreError);
      expect(refusals[0]).toMatchObject({ code: "LOOM_READ_ONLY" });
      // Reads work: the log, the blob, the key.
      expect(await reader.events.head("x")).toBe(2);
      expect(new TextDecoder().decode((await reader.content.get(address))!)).toBe("blob");
      expect(await reader.keys.get("user-1")).toBeInstanceOf(Uint8Array);
    } finally {
      await reader.close();
    }
    expect(await entries()).toEqual(listed);
    // A missing directory is refused, not created.
    const missing = join(dir, "nowhere");
    await expect(fsStores({ dir: missing, readOnly: true })).rejects.toBeInstanceOf(ReadOnlyStoreError);
    await expect(stat(missing)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
