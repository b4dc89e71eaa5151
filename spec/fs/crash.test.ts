// A process SIGKILLed in the middle of a stream of appends loses nothing it acknowledged.
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { kill, removeTempDirs, spawnChild, tempDir, waitForOutput } from "./helpers.js";

afterAll(removeTempDirs);

const ackCount = (out: string) => out.split("\n").filter((l) => l.startsWith("ack ")).length;

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
      if (word === "ack" && seq !== undefined) acknowledged.set(executionId!, Math.max(acknowledged.get(executionId!) ?? 0, Number(seq)));
    }
    expect(acknowledged.size).toBe(3);

    const stores = await fsStores({ dir });
    for (const [executionId, seq] of acknowledged) {
      const head = await stores.events.head(executionId);
      expect(head).toBeGreaterThanOrEqual(seq);
      const records = await stores.events.read(executionId);
      expect(records.map((r) => r.seq)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
      await stores.events.append(executionId, head, [{ seq: head + 1, at: 0, type: "loom.step.completed" }]);
    }
    await stores.close();
  });
});
