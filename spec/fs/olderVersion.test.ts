// ADR 0008 D6: the fs format stays readable both ways between this version and the one before the clean-close
// checkpoint (spec/fixtures/older-fs: that version's fs adapter, bundled). The older version ignores the clean
// mark, drops it when it rewrites the checkpoint before its first append, so an older writer that crashes never
// leaves a mark over logs it grew; and this version reads whatever the older one wrote, clean or crashed.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scanFrames } from "../../adapters/fs/framing.js";
import { fsStores } from "../../adapters/fs/index.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

type Catalogue = [string, number, string][];

const checkpointKeys = async (dir: string): Promise<string[]> => {
  const value = scanFrames(await readFile(join(dir, "catalogue.ckpt"))).frames[0]!.value as {
    entries: [string, unknown][];
  };
  return value.entries.map(([key]) => key);
};
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The older version runs `list` or `create` on the directory and closes it; resolves with its catalogue. */
async function older(dir: string, ...command: ["list"] | ["create", string, string]): Promise<Catalogue> {
  const child = spawnChild("olderVersion.ts", [dir, ...command]);
  const out = await waitForOutput(child, (stdout) => stdout.includes("\n"));
  await new Promise((resolve) => child.once("close", resolve));
  return JSON.parse(out.trim()) as Catalogue;
}

async function thisList(dir: string): Promise<Catalogue> {
  const stores = await fsStores({ dir });
  const catalogue = (await stores.events.listExecutions()).map((e): [string, number, string] => [
    e.executionId,
    e.head,
    e.status,
  ]);
  await stores.close();
  return catalogue;
}

/** "a" with 4 records and "b" with 2, written by this version and closed cleanly (a clean checkpoint with its mark). */
async function writtenHere(): Promise<string> {
  const dir = await tempDir("older");
  const stores = await fsStores({ dir });
  await stores.events.append("a", 0, [started(1)]);
  for (let seq = 2; seq <= 4; seq++) await stores.events.append("a", seq - 1, [step(seq)]);
  await stores.events.append("b", 0, [started(1), step(2)]);
  await stores.close();
  return dir;
}

describe("an older version on a directory this version wrote, and back (ADR 0008 D6)", () => {
  it("the older version lists a cleanly closed directory; an older writer that crashes leaves no clean mark, and this version recovers what it acknowledged", async () => {
    const dir = await writtenHere();
    expect(await checkpointKeys(dir)).toContain("~clean");
    expect(await older(dir, "list")).toEqual([
      ["a", 4, "running"],
      ["b", 2, "running"],
    ]);

    // The older writer appends 5 records to "a" and dies without closing.
    const child = spawnChild("olderVersion.ts", [dir, "append", "a", "5"]);
    const out = await waitForOutput(child, (stdout) => stdout.includes("appended"));
    expect(JSON.parse(out.split("\n")[0]!)).toEqual([
      ["a", 9, "running"],
      ["b", 2, "running"],
    ]);
    // Before its first append it rewrote the checkpoint without the mark: nothing vouches for the logs it grew.
    expect(await checkpointKeys(dir)).not.toContain("~clean");
    await kill(child);
    expect(await exists(join(dir, "loomwork.lock"))).toBe(true); // the dead writer's lock

    // This version takes over the dead writer's lock and recovers every log: the 5 acknowledged records are there.
    const stores = await fsStores({ dir });
    expect((await stores.events.listExecutions()).map((e) => [e.executionId, e.head])).toEqual([
      ["a", 9],
      ["b", 2],
    ]);
    const records = await stores.events.read("a", 0);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(records.at(-1)).toMatchObject({ type: "loom.step.completed", output: { older: 9 } });
    await stores.events.append("a", 9, [step(10)]);
    await stores.close();
    // A clean close here writes the mark again, and the older version still reads the directory.
    expect(await checkpointKeys(dir)).toContain("~clean");
    expect(await older(dir, "list")).toEqual([
      ["a", 10, "running"],
      ["b", 2, "running"],
    ]);
  });

  it("this version reads a directory the older one created and closed, and each reopens what the other closed with the same heads", async () => {
    const dir = await tempDir("older-first");
    expect(await older(dir, "create", "c", "3")).toEqual([["c", 3, "running"]]);
    expect(await checkpointKeys(dir)).not.toContain("~clean"); // an older close writes no mark: this version recovers at open
    expect(await thisList(dir)).toEqual([["c", 3, "running"]]);
    expect(await checkpointKeys(dir)).toContain("~clean");
    expect(await older(dir, "list")).toEqual([["c", 3, "running"]]);
    expect(await thisList(dir)).toEqual([["c", 3, "running"]]);
    const stores = await fsStores({ dir });
    expect((await stores.events.read("c", 0)).map((r) => [r.seq, r.type])).toEqual([
      [1, "loom.execution.started"],
      [2, "loom.step.completed"],
      [3, "loom.step.completed"],
    ]);
    await stores.close();
  });
});
