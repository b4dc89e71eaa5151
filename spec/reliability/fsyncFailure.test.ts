// Campaign 3: an I/O error (EIO) from fsync, a directory fsync, a write or a rename, at every disk
// operation of an agent run. Pass: the writer fails and stays failed (every later write, to any
// execution and any of the three stores, is refused with WriterFailedError, even once the disk works
// again); reads keep serving what was acknowledged; a reopen (after the failed fsync's pages were
// dropped, as Linux may do) recovers everything acknowledged and the agent resumes to the output of
// the uninterrupted run.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { fsStores, type FsOps, type FsStores } from "../../adapters/fs/index.js";
import { utf8 } from "../../stores/bytes.js";
import { WriterFailedError } from "../../stores/errors.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { started, step } from "../conformance/suite.js";
import { prng } from "../support/workload.js";
import { SimDisk } from "./simDisk.js";
import {
  cases,
  contiguous,
  crashAgent,
  crashAgentEffects,
  duplicateOutcomes,
  EXECUTION_ID,
  removeTempDirs,
  runCrashAgent,
  tempDir,
  timeout,
  withoutTime,
} from "./support.js";

afterAll(removeTempDirs);

const TURNS = 3;
const noSync: Partial<FsOps> = { fsync: async () => undefined, fsyncDir: async () => undefined };

/** Every write path of the three stores refuses with WriterFailedError; reads still work. */
async function expectStaysFailed(stores: FsStores, label: string): Promise<void> {
  const refused = async (what: string, work: Promise<unknown>) => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, `${label}: ${what} after the failure`).toBeInstanceOf(WriterFailedError);
  };
  await refused("an append to another execution", stores.events.append("other", 0, [started(1)]));
  await refused("a snapshot", stores.events.putSnapshot(EXECUTION_ID, { seq: 1, at: 1, state: {} }));
  await refused("a blob put", stores.content.put(utf8("after the failure")));
  await refused("a touch clock", stores.content.touchClock());
  await refused("a key", stores.keys.getOrCreate("someone"));
  await refused("a retention delete", stores.events.deleteHistory(EXECUTION_ID));
  await stores.events.read(EXECUTION_ID); // reads keep serving what is durable
}

describe("EIO at every disk operation", () => {
  it(
    "fails the writer for good at each operation; a reopen recovers and the agent resumes to the same output",
    async () => {
      const baselineDisk = new SimDisk();
      const baselineDir = await tempDir("eio-base");
      const baselineStores = await fsStores({ dir: baselineDir, fsOps: baselineDisk.fsOps });
      const baseline = await runCrashAgent(baselineStores, { turns: TURNS });
      await baselineStores.close();
      const total = baselineDisk.ops;
      let failedRuns = 0;
      let openFailures = 0;
      for (let k = 1; k <= total; k++) {
        const dir = await tempDir(`eio-${k}`);
        const disk = new SimDisk(dir);
        disk.failOps.add(k);
        const acked: StoredRecord[] = [];
        let stores: FsStores | undefined;
        let outcome: unknown;
        try {
          stores = await fsStores({ dir, fsOps: disk.fsOps });
          outcome = await runCrashAgent(stores, { turns: TURNS, acked }).catch((error: unknown) => error);
        } catch (error) {
          // EIO while opening: fsStores rejects with it and releases the lock (a retry below reopens).
          expect(error, `EIO at op ${k} while opening`).toMatchObject({ code: "EIO" });
          openFailures++;
        }
        let label = `EIO at op ${k} of ${total} (${disk.failed.join(", ")})`;
        if (stores) {
          if (outcome instanceof Error) {
            expect(outcome, label).toBeInstanceOf(WriterFailedError);
            failedRuns++;
          } else {
            // The failure hit a snapshot file (written beside the run's last appends, not in front of them),
            // or comes with the close: the run itself had ended, every record it wrote durable.
            expect(outcome, label).toMatchObject({ result: baseline.result });
            const snapshotFile = (op: string) =>
              op.includes(join(dir, "tmp")) ||
              /rename .*[\\/]snapshot$/.test(op) ||
              / fsyncDir .*[\\/]executions[\\/][^\\/]+$/.test(op);
            expect(disk.failed.every(snapshotFile), label).toBe(true);
          }
          if (disk.failed.length > 0) await expectStaysFailed(stores, label);
          await stores.close();
        }
        label = `EIO at op ${k} of ${total} (${disk.failed.join(", ")})`;
        expect(disk.failed, label).toHaveLength(1);
        // Linux may drop the dirty pages of a failed fsync: nothing unsynced survives.
        disk.crash();
        disk.applyCrash(prng(k), "drop");
        const reopened = await fsStores({ dir, fsOps: noSync });
        const resumed = await runCrashAgent(reopened, { turns: TURNS });
        await reopened.close();
        expect(resumed.result, label).toEqual(baseline.result);
        expect(contiguous(resumed.log), label).toBe(true);
        expect(duplicateOutcomes(resumed.log), label).toEqual([]);
        expect(withoutTime(resumed.log), label).toEqual(withoutTime(baseline.log));
        for (const record of acked)
          expect(JSON.stringify(resumed.log[record.seq - 1]), `${label}: acknowledged seq ${record.seq}`).toBe(
            JSON.stringify(record),
          );
      }
      // Every other failure fails the run: an append's write or fsync, the log's creation, the open.
      expect(failedRuns).toBeGreaterThan(total / 3);
      console.info(
        `[campaign 3] ${total} disk operations, each failed once with EIO: ${failedRuns} runs failed with WriterFailedError, ${openFailures} opens failed; all recovered`,
      );
    },
    timeout(60_000, 600_000),
  );

  it(
    "fails every running execution of the app, not only the one whose fsync failed, and loses none of them",
    async () => {
      const seeds = cases("EIO_SEEDS", 10, 300);
      let failedRuns = 0;
      let finishedFirst = 0;
      for (let seed = 1; seed <= seeds; seed++) {
        const random = prng(seed);
        const dir = await tempDir(`eio-many-${seed}`);
        const disk = new SimDisk(dir);
        const stores = await fsStores({ dir, fsOps: disk.fsOps });
        disk.failOps.add(disk.ops + 5 + Math.floor(random() * 60));
        const loop = crashAgent(TURNS);
        const effects = crashAgentEffects(TURNS, () => undefined);
        const app = createApp(defineConfig({ stores, effects, logics: [loop] }));
        const ids = Array.from({ length: 6 }, (_, i) => `run-${i}`);
        const acked = new Map<string, StoredRecord[]>(ids.map((id) => [id, []]));
        // Executions whose end was acknowledged before the EIO: only these may succeed.
        const endedBeforeFailure = new Set<string>();
        app.on("append", ({ executionId, records }) => {
          acked.get(executionId)!.push(...records);
          if (disk.failed.length === 0 && records.some((r) => r.type === EXECUTION_ENDED))
            endedBeforeFailure.add(executionId);
        });
        const outcomes = await Promise.allSettled(
          ids.map(async (id) => {
            await app.start(loop, { executionId: id, input: { prompt: `topic ${id}` } });
            return app.result(id);
          }),
        );
        const label = `seed ${seed} (${disk.failed.join(", ")})`;
        expect(disk.failed, label).toHaveLength(1);
        // Every execution still running when the EIO hit fails with WriterFailedError; only those that had
        // already ended succeed.
        outcomes.forEach((o, i) => {
          const id = ids[i]!;
          if (endedBeforeFailure.has(id)) expect(o.status, `${label}: ${id} ended before the EIO`).toBe("fulfilled");
          else {
            expect(o.status, `${label}: ${id} was running at the EIO`).toBe("rejected");
            expect((o as PromiseRejectedResult).reason, `${label}: ${id}`).toBeInstanceOf(WriterFailedError);
          }
        });
        const failedHere = outcomes.filter((o) => o.status === "rejected").length;
        expect(failedHere, label).toBe(ids.length - endedBeforeFailure.size);
        expect(failedHere, label).toBeGreaterThan(0);
        failedRuns += failedHere;
        finishedFirst += endedBeforeFailure.size;
        await expect(app.start(loop, { executionId: "late", input: { prompt: "late" } }), label).rejects.toBeInstanceOf(
          WriterFailedError,
        );
        await app.close();
        await stores.close();
        disk.crash();
        disk.applyCrash(random, "drop");

        const reopened = await fsStores({ dir, fsOps: noSync });
        const app2 = createApp(defineConfig({ stores: reopened, effects, logics: [loop] }));
        for (const id of ids) {
          if ((await reopened.events.head(id)) === 0)
            await app2.start(loop, { executionId: id, input: { prompt: `topic ${id}` } });
          else await app2.resume(id);
          expect(await app2.result(id), `${label}: ${id}`).toMatchObject({ text: `Done after ${TURNS} turns.` });
          const log = await app2.log(id);
          expect(contiguous(log), `${label}: ${id}`).toBe(true);
          for (const record of acked.get(id)!)
            expect(JSON.stringify(log[record.seq - 1]), `${label}: ${id} acknowledged seq ${record.seq}`).toBe(
              JSON.stringify(record),
            );
        }
        await app2.close();
        await reopened.close();
      }
      console.info(
        `[campaign 3] ${seeds} seeds x 6 concurrent executions: one EIO failed every execution still running (${failedRuns} failed, ${finishedFirst} had ended before it), a reopen finished them all`,
      );
    },
    timeout(60_000, 900_000),
  );

  it("refuses a writer whose fsync failed even when a later fsync would succeed (no lucky retry)", async () => {
    const dir = await tempDir("eio-retry");
    const disk = new SimDisk(dir);
    const stores = await fsStores({ dir, fsOps: disk.fsOps });
    await stores.events.append("e", 0, [started(1)]);
    disk.failOps.add(disk.ops + 2); // the next append: write, then the failing fsync
    await expect(stores.events.append("e", 1, [step(2)])).rejects.toBeInstanceOf(WriterFailedError);
    const before = disk.ops;
    await expect(stores.events.append("e", 1, [step(2)])).rejects.toBeInstanceOf(WriterFailedError);
    expect(disk.ops, "a failed writer touches the disk no more").toBe(before);
    expect((await stores.events.read("e")).map((r) => r.seq)).toEqual([1]);
    await stores.close();
  });
});
