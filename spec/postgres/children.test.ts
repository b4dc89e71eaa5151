// Child executions on the fleet (ADR 0012 D9): a parent a worker runs submits its child to the fleet, any worker
// claims it, their messages go through the inbox (journaled once, with their sender and id), and the child's last
// messages reach the parent before its outcome; the submitter's app.result resolves with the tree's output.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToolEffect } from "../../actors/effects/effect.js";
import { EVENT_RECEIVED, EXECUTION_STARTED } from "../../stores/schema.js";
import { parent } from "../children/machines.js";
import { startFleet } from "./workers.js";
import { startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

async function fleet(workers: number) {
  const calls: string[] = [];
  const f = await startFleet(server, {
    name: "children",
    workers,
    logics: [parent],
    effects: {
      double: createToolEffect(async (x: number, ctx) => (calls.push(ctx.executionId), x * 2)),
    },
  });
  return { ...f, calls };
}

describe("child executions on the fleet", () => {
  it("a submitted parent's child is submitted and claimed by a worker; messages both ways through the inbox, once", async () => {
    const f = await fleet(2);
    try {
      await f.app.submit(parent, { executionId: "f1" });
      expect(await f.app.result("f1")).toEqual({ seen: ["progress", "pong"], result: { doubled: 42 } });
      const child = await f.app.log("f1/w");
      expect(child[0]).toMatchObject({ type: EXECUTION_STARTED, parent: { executionId: "f1" }, root: "f1" });
      expect(child.at(-1)).toMatchObject({ status: "done" });
      for (const log of [child, await f.app.log("f1")]) expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
      const received = (await f.app.log("f1")).filter((r) => r.type === EVENT_RECEIVED);
      expect(received.map((r) => (r.type === EVENT_RECEIVED ? r.event.type : ""))).toEqual(["PROGRESS", "PONG"]);
      expect(f.calls).toHaveLength(1);
    } finally {
      await f.close();
    }
  }, 60_000);
});
