// What the fleet inbox takes: `stores.send` validates an event before the insert (an object with a string
// type, plain JSON, none of XState's or the runtime's reserved types, a well-formed TOOL_APPROVAL, an
// execution that exists), refusing with the runtime's typed errors and inserting nothing. Whether a decision's
// call is still waiting only the worker holding the lease can tell: it refuses it when it delivers, journals
// nothing, and drops the row. On a real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { ERROR_CODES } from "../../actors/constants.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { createWorker, postgresStores, type PostgresStores } from "../../adapters/postgres/index.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import { EVENT_RECEIVED, TRANSITION } from "../../stores/schema.js";
import { demoMachine } from "../support/demoMachine.js";
import { until } from "../support/harness.js";
import { dropSchema, freshSchema, startPostgres, type PgServer } from "./server.js";

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});

async function inboxRows(stores: PostgresStores, schema: string): Promise<number> {
  const { rows } = await stores.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".inbox`);
  return rows[0]!.n;
}

describe("the fleet inbox: what stores.send takes", () => {
  it("refuses a malformed, reserved or non-JSON event, a malformed approval and an unknown execution with typed errors, inserting nothing", async () => {
    const schema = freshSchema("inbox");
    const stores = await postgresStores({ url: server.url, schema, pollMs: 100 });
    const app = createApp(defineConfig({ stores, effects: {} }));
    try {
      await app.submit(demoMachine, { executionId: "d1", input: { topic: "owls" } });
      const send = (executionId: string, event: unknown) => stores.send(executionId, event as { type: string });
      const refused: [unknown, object][] = [
        [null, { name: "ConfigError", code: ERROR_CODES.config }],
        [undefined, { name: "ConfigError", code: ERROR_CODES.config }],
        [{ type: 5 }, { name: "ConfigError", code: ERROR_CODES.config }],
        [["APPROVE"], { name: "ConfigError", code: ERROR_CODES.config }],
        [
          { type: "APPROVE", n: 10n },
          { name: "ConfigError", code: ERROR_CODES.config },
        ],
        [
          { type: "xstate.done.actor.model", output: { toolCalls: [] } },
          { name: "ReservedEventError", code: ERROR_CODES.reservedEvent },
        ],
        [{ type: "xstate.after.1000.demo.waiting" }, { name: "ReservedEventError", code: ERROR_CODES.reservedEvent }],
        [{ type: "loom.step.completed" }, { name: "ReservedEventError", code: ERROR_CODES.reservedEvent }],
        [
          { type: "TOOL_APPROVAL", toolCallId: "c1", approved: "yes" },
          { name: "ApprovalMalformedError", code: ERROR_CODES.approvalMalformed, field: "approved" },
        ],
        [
          { type: "TOOL_APPROVAL", toolCallId: 42, approved: true },
          { name: "ApprovalMalformedError", code: ERROR_CODES.approvalMalformed, field: "toolCallId" },
        ],
      ];
      for (const [event, error] of refused) {
        // The event's own refusals name the execution; a ConfigError names the path inside the event.
        const named = "name" in error && error.name === "ConfigError" ? { path: "send.event" } : { executionId: "d1" };
        await expect(send("d1", event), String(event)).rejects.toMatchObject({ ...error, ...named });
      }
      await expect(send("nope", { type: "APPROVE" })).rejects.toMatchObject({
        name: "UnknownExecutionError",
        code: ERROR_CODES.unknownExecution,
        executionId: "nope",
      });
      expect(await inboxRows(stores, schema)).toBe(0);
      // What the machine itself takes goes in.
      await stores.send("d1", { type: "APPROVE" });
      expect(await inboxRows(stores, schema)).toBe(1);
    } finally {
      await app.close();
      await stores.close();
      await dropSchema(server.url, schema);
    }
  });

  it("two approvals of one call through the inbox journal one decision: the worker refuses the second when it delivers and drops it", async () => {
    const schema = freshSchema("inbox");
    const open = () => postgresStores({ url: server.url, schema, pollMs: 100 });
    const submitterStores = await open();
    const workerStores = await open();
    const deleted: string[] = [];
    const ops = agentLoop$({ id: "ops", model: "model", tools: ["deleteFile"], warnTranscriptBytes: false });
    const worker = await createWorker({
      stores: workerStores,
      logics: [ops],
      effects: {
        model: createLlmEffect(
          scriptedModel([
            { toolCalls: [{ id: "call_rm", toolName: "deleteFile", input: { path: "/etc/hosts" } }] },
            { text: "Done." },
          ]),
        ),
        deleteFile: createToolEffect(async ({ path }: { path: string }) => (deleted.push(path), { deleted: path }), {
          needsApproval: true,
        }),
      },
      concurrency: 2,
      leaseMs: 5_000,
      pollMs: 100,
      drainMs: 1_000,
      signals: [],
    });
    const app = createApp(defineConfig({ stores: submitterStores, effects: {} }));
    try {
      await app.submit(ops, { executionId: "ops-1", input: { prompt: "Clean up." } });
      await until(
        async () => (await app.log("ops-1")).some((r) => r.type === TRANSITION && r.to === "awaitingApproval"),
        30_000,
      );
      const approve = { type: "TOOL_APPROVAL", toolCallId: "call_rm", approved: true };
      // Both rows go in: the inbox cannot tell whether the call still waits.
      await submitterStores.send("ops-1", approve);
      await submitterStores.send("ops-1", approve);
      expect(await app.result("ops-1")).toMatchObject({ text: "Done.", turns: 2 });
      await until(async () => (await inboxRows(submitterStores, schema)) === 0, 30_000);
      const received = (await app.log("ops-1")).flatMap((r) => (r.type === EVENT_RECEIVED ? [r.event] : []));
      expect(received).toEqual([approve]);
      expect(deleted).toEqual(["/etc/hosts"]);
    } finally {
      await worker.stop();
      await app.close();
      await workerStores.close();
      await submitterStores.close();
      await dropSchema(server.url, schema);
    }
  });
});
