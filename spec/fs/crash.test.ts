// A process SIGKILLed in the middle of a stream of appends loses nothing it acknowledged.
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import type { StoredRecord } from "../../stores/types.js";
import { kill, removeTempDirs, spawnChild, started, step, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

const ackCount = (out: string) => out.split("\n").filter((l) => l.startsWith("ack ")).length;

/**
 * The record children/appender.ts writes at `seq`: seq 1 starts; every seq divisible by 5 opens a
 * two-record append (a pad of seq % 700 "x", then a default step); the others carry { n: seq }.
 */
function written(seq: number): StoredRecord {
  if (seq === 1) return started(1);
  if (seq % 5 === 0) return step(seq, "x".repeat(seq % 700));
  if (seq % 5 === 1) return step(seq);
  return step(seq, { n: seq });
}

describe("fs crash safety", () => {
  it.each([150, 400])("reopens with every acknowledged record after a SIGKILL past %i acks", async (acks) => {
    const dir = await tempDir("crash");
    const child = spawnChild("appender.ts", [dir]);
    let stdout: string;
    try {
      stdout = await waitForOutput(child, (out) => ackCount(out) >= acks);
    } finally {
      await kill(child);
    }
    const acknowledged = new Map<string, number>();
    for (const line of stdout.split("\n")) {
      const [word, executionId, seq] = line.split(" ");
      if (word === "ack" && seq !== undefined)
        acknowledged.set(executionId!, Math.max(acknowledged.get(executionId!) ?? 0, Number(seq)));
    }
    expect(acknowledged.size).toBe(3);

    const stores = await fsStores({ dir });
    for (const [executionId, seq] of acknowledged) {
      const head = await stores.events.head(executionId);
      expect(head).toBeGreaterThanOrEqual(seq);
      const records = await stores.events.read(executionId);
      // Every record read back is the one written at its seq, byte for byte, acknowledged or not.
      expect(records).toEqual(Array.from({ length: head }, (_, i) => written(i + 1)));
      expect(JSON.stringify(records)).toBe(JSON.stringify(records.map((r) => written(r.seq))));
      expect((await stores.events.getExecution(executionId))?.damaged).toBeUndefined();
      await stores.events.append(executionId, head, [{ seq: head + 1, at: 0, type: "loom.step.completed" }]);
    }
    await stores.close();
  });
});
