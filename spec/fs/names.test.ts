// Execution ids and subjects are data, never paths: any well-formed string round-trips and stays inside the
// directory (one with a lone surrogate is refused by every store: the conformance suite).
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { removeTempDirs, started, step, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

const ids = ["../../escape", "a/b\\c", "", "CON", "ü\u0000x", "Ab", "aB", "\ufffd", "x".repeat(500), "🧵".repeat(40)];

describe("fs names", () => {
  it("stores any execution id and subject under a safe name, distinctly, across a reopen", async () => {
    const dir = await tempDir("names");
    const first = await fsStores({ dir });
    for (const [i, id] of ids.entries()) {
      await first.events.append(id, 0, [started(1, `s:${id}`), step(2, i)]);
      await first.events.putSnapshot(id, { seq: 2, at: i, state: { id } });
      await first.keys.getOrCreate(id);
    }
    await first.events.archive(ids[0]!, 1);
    await first.keys.destroy(ids[1]!);
    await first.close();
    expect((await readdir(dir)).sort()).toEqual(["catalogue.ckpt", "content", "executions", "keys", "tmp", "trash"]);
    expect(await readdir(join(dir, "executions"))).toHaveLength(ids.length);

    const second = await fsStores({ dir });
    expect((await second.events.listExecutions()).map((e) => e.executionId)).toEqual(
      [...ids].sort((a, b) => (a < b ? -1 : 1)),
    );
    for (const [i, id] of ids.entries()) {
      expect(await second.events.getExecution(id)).toMatchObject({ executionId: id, subject: `s:${id}`, head: 2 });
      expect((await second.events.read(id)).at(-1)).toEqual(step(2, i));
      expect(await second.events.getSnapshot(id)).toEqual({ seq: 2, at: i, state: { id } });
      expect(await second.keys.isDestroyed(id)).toBe(i === 1);
    }
    expect((await second.events.readArchives(ids[0]!))[0]!.records).toEqual([started(1, `s:${ids[0]}`)]);
    await second.events.deleteHistory(ids[2]!);
    expect(await second.events.head(ids[2]!)).toBe(0);
    await second.close();
  });
});
