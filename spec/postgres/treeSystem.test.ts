// One registry per tree on the fleet (ADR 0012 D4, D9): children claimed by any worker find their siblings and their
// parent's callback actor by systemId; a message to a sibling goes through its inbox (journaled once, with its sender),
// one to a live source reaches the worker holding it and the source there, live.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_RECEIVED } from "../../stores/schema.js";
import { earHolder, siblings } from "../children/systemMachines.js";
import { setup } from "xstate";
import { startFleet } from "./workers.js";
import { startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

// A submitted execution whose first macrostep has a custom action: the submitter plans it and runs nothing.
const greetings: string[] = [];
const greeter = setup({}).createMachine({
  id: "greeter",
  entry: () => greetings.push("hello"),
  on: { BYE: { target: ".gone", actions: () => greetings.push("bye") } },
  initial: "here",
  states: { here: {}, gone: { type: "final" } },
});

async function fleet(workers: number) {
  const f = await startFleet(server, {
    name: "treesystem",
    workers,
    logics: [siblings, earHolder, greeter],
    effects: {},
  });
  const { app, submitter, schema } = f;
  return {
    ...f,
    send: (executionId: string, event: { type: string }) => submitter.send(executionId, event),
    /** Waits for the executions' ends; on a stall, prints the catalogue and every log (what the failure needs). */
    async settledOrDumped(ids: string[]) {
      const stall = new Promise<"stall">((resolve) => setTimeout(() => resolve("stall"), 30_000).unref());
      const ended = Promise.all(ids.map((id) => app.result(id).catch(() => undefined)));
      if ((await Promise.race([ended, stall])) !== "stall") return;
      for (const info of await app.executions())
        console.error("stalled:", JSON.stringify(info), JSON.stringify(await app.log(info.executionId)));
      const { rows } = await submitter.db.query(`SELECT * FROM "${schema}".fleet`);
      console.error("fleet rows:", JSON.stringify(rows));
    },
  };
}

describe("one registry per tree on the fleet", () => {
  it("siblings on any worker message each other by systemId, once; a child reaches its parent's callback actor", async () => {
    const f = await fleet(2);
    try {
      await f.app.submit(siblings, { executionId: "s1" });
      await f.app.submit(earHolder, { executionId: "e1" });
      await f.settledOrDumped(["s1", "e1"]);
      expect(await f.app.result("s1")).toBe(42);
      const asked = (await f.app.log("s1/a")).filter((r) => r.type === EVENT_RECEIVED);
      expect(asked).toEqual([
        expect.objectContaining({ event: { type: "ASK" }, from: expect.objectContaining({ executionId: "s1/c" }) }),
      ]);
      expect(await f.app.result("e1")).toBe("heard");
    } finally {
      await f.close();
    }
  }, 120_000);
});

describe("a submitted execution on the fleet", () => {
  it("runs its first macrostep's custom actions once, on the worker that first claims it", async () => {
    const f = await fleet(2);
    try {
      await f.app.submit(greeter, { executionId: "g1" });
      const until = Date.now() + 20_000;
      while (greetings.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      await f.send("g1", { type: "BYE" });
      await f.app.result("g1");
      expect(greetings).toEqual(["hello", "bye"]);
    } finally {
      await f.close();
    }
  }, 60_000);
});
