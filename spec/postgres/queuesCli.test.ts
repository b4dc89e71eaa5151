// `loomwork queues` against a live fleet: each queue's limits, its depth and the executions running per key, read
// from the database while the fleet runs (a spawned CLI process, as a user runs it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "../cli/support.js";
import { until } from "../support/harness.js";
import { failoverFlow } from "./failover.js";
import { countingEffects } from "./queueRun.js";
import { startPostgres, type PgServer } from "./server.js";
import { startFleet } from "./workers.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

describe("loomwork queues", () => {
  it("shows depth and running per key of a live fleet; --json; an unknown queue exits 3", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const counting = countingEffects(0, gate);
    const f = await startFleet(server, {
      name: "qcli",
      workers: 1,
      logics: [failoverFlow],
      effects: counting.effects,
      queues: { perUser: { concurrency: 2, perKey: 1, rate: { limit: 100, periodMs: 60_000 } } },
    });
    try {
      for (const id of ["ann-1", "ann-2", "ann-3", "bob-1"])
        await f.app.submit(failoverFlow, { executionId: id, input: null, queue: "perUser", key: id.split("-")[0] });
      await until(() => counting.firstSteps.length === 2, 30_000);
      const args = ["queues", "--postgres", server.url, "--schema", f.schema];
      const json = await cli([...args, "--json"]);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        queues: [
          {
            name: "perUser",
            concurrency: 2,
            perKey: 1,
            rate: { limit: 100, periodMs: 60_000 },
            waiting: 2,
            running: 2,
            keys: [
              { key: "ann", waiting: 2, running: 1 },
              { key: "bob", waiting: 0, running: 1 },
            ],
          },
        ],
      });
      const text = await cli(args);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain("perUser  concurrency 2, perKey 1, rate 100/60000 ms  waiting 2  running 2");
      expect(text.stdout).toMatch(/ann +1 +2/);
      const missing = await cli([...args, "nope"]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain('"nope"');
      open();
      await Promise.all(["ann-1", "ann-2", "ann-3", "bob-1"].map((id) => f.app.result(id)));
    } finally {
      open();
      await f.close();
    }
  }, 60_000);
});
