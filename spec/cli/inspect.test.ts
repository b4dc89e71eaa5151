// `loomwork inspect <executionId> --ws <url>` plays a recorded journal to an inspector server with the
// records' original timestamps, through @statelyai/inspect's WebSocket inspector.
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { EVENT_RECEIVED, EXECUTION_STARTED, STEP_COMPLETED, STEP_FAILED, type StoredRecord } from "../../index.js";
import { createInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import { createApp, defineConfig, memoryStores } from "../../index.js";
import { researchAgent, researchEffects } from "../../stories/support/researchAgent.js";
import { inspectorServer, type InspectorServer } from "../inspector/support.js";
import { cli, makeJournal, type Journal } from "./support.js";

let journal: Journal;
let records: StoredRecord[];
let server: InspectorServer;
beforeAll(async () => {
  journal = await makeJournal();
  const stores = await fsStores({ dir: journal.dir });
  records = await stores.events.read("research-done");
  await stores.close();
  server = await inspectorServer();
});
afterAll(async () => {
  await server.close();
  await rm(journal.dir, { recursive: true, force: true });
});

const inputs = () =>
  records.filter((r) => [EXECUTION_STARTED, EVENT_RECEIVED, STEP_COMPLETED, STEP_FAILED].includes(r.type));

describe("loomwork inspect", () => {
  it("plays the journal with the original timestamps and a definition inferred from its transitions", async () => {
    server.messages.length = 0;
    const { code, stdout, stderr } = await cli(["inspect", "research-done", "--ws", server.url, "--dir", journal.dir]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const steps = inputs();
    expect(stdout).toContain(
      `sent ${1 + 2 * steps.length} inspection events for research-done (${steps.length} macrosteps, definition inferred from the journal) to ${server.url}`,
    );
    await server.until((m) => m.length === 1 + 2 * steps.length);
    const [actor, ...rest] = server.messages;
    // Named after the execution id, as on the live path (the machine's id is the definition's).
    expect(actor).toMatchObject({
      type: "@xstate.actor",
      name: "research-done",
      sessionId: "loom:research-done",
      rootId: "loom:research-done",
      createdAt: String(records[0]!.at),
    });
    const definition = JSON.parse(actor!.definition);
    expect(definition).toMatchObject({ id: "researcher", initial: "thinking", states: { done: { type: "final" } } });
    expect(definition.states.thinking.on["xstate.done.actor.model"]).toEqual([
      { target: "#researcher.acting" },
      { target: "#researcher.done" },
    ]);
    expect(definition.states.acting.on["xstate.done.actor.tool:*:*"]).toEqual(
      expect.arrayContaining([{ target: "#researcher.thinking" }, { target: "#researcher.acting" }]),
    );
    const events = rest.filter((m) => m.type === "@xstate.event");
    expect(events.map((m) => m.createdAt)).toEqual(steps.map((r) => String(r.at)));
    expect(events[0]!.event).toEqual({ type: "xstate.init", input: { prompt: expect.stringContaining("barn owls") } });
    expect(events[1]!.event).toMatchObject({
      type: "xstate.done.actor.model",
      output: { toolCalls: [{ toolName: "search" }] },
    });
    const snapshots = rest.filter((m) => m.type === "@xstate.snapshot");
    expect(snapshots.map((m) => m.snapshot.value)).toEqual(
      records.filter((r) => r.type === "loom.transition").map((r) => r.to),
    );
    expect(snapshots.at(-1)!.snapshot).toMatchObject({ status: "done", output: { turns: 6 } });
  });

  it("sends the machine's own definition and real snapshots with --logic", async () => {
    server.messages.length = 0;
    const { code, stdout } = await cli([
      "inspect",
      "research-done",
      "--ws",
      server.url,
      "--dir",
      journal.dir,
      "--logic",
      "stories/support/researchAgent.ts",
      "--json",
    ]);
    expect(code).toBe(0);
    const { messages } = JSON.parse(stdout);
    await server.until((m) => m.length === messages);
    const definition = JSON.parse(server.messages[0]!.definition);
    // "deciding" and "routing" are transient: no TRANSITION record names them, only the machine does.
    expect(Object.keys(definition.states)).toEqual(expect.arrayContaining(["deciding", "routing", "compacting"]));
    const snapshots = server.messages.filter(
      (m) => m.type === "@xstate.snapshot" && m.sessionId === "loom:research-done",
    );
    expect(snapshots.map((m) => m.snapshot.context.turn)).toEqual([0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5]);
    expect(snapshots.at(-1)!.snapshot.context.messages.length).toBeGreaterThan(10);
  });

  it("--logic: the same actors (children included), names and parents as the live path announces for that journal", async () => {
    // The live path: the journal resumed by an app with an inspector (its macrosteps replayed to it).
    const live: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void live.push(event) });
    const stores = memoryStores();
    await stores.events.append("research-done", 0, records);
    const app = createApp(
      defineConfig({
        stores,
        effects: researchEffects({ modelMs: 1, toolMs: 1 }),
        logics: [researchAgent],
        observability: { inspect: inspector.inspect },
      }),
    );
    await app.resume("research-done");
    await new Promise((r) => setTimeout(r, 50));
    await app.close();
    server.messages.length = 0;
    const { code, stdout } = await cli([
      "inspect",
      "research-done",
      "--ws",
      server.url,
      "--dir",
      journal.dir,
      "--logic",
      "stories/support/researchAgent.ts",
      "--json",
    ]);
    expect(code).toBe(0);
    const { messages } = JSON.parse(stdout);
    expect(messages).toBe(live.length);
    await server.until((m) => m.length === live.length);
    const shape = (e: Record<string, any>) =>
      e.type === "@xstate.actor"
        ? [e.type, e.sessionId, e.name, e.parentId ?? null]
        : [e.type, e.sessionId, e.event?.type, e.snapshot?.status ?? null];
    expect(server.messages.map(shape)).toEqual(live.map(shape));
    expect(server.messages.filter((m) => m.type === "@xstate.actor").map((m) => m.name)).toEqual(
      expect.arrayContaining(["research-done", "model", "tool:0:0"]),
    );
  });

  it("--seq n: time travel, the journal played up to the macrostep that holds seq n", async () => {
    const transitions = records.filter((r) => r.type === "loom.transition");
    const at = transitions[4]!;
    const steps = inputs().filter((r) => r.seq < at.seq);
    server.messages.length = 0;
    const { code, stdout } = await cli([
      "inspect",
      "research-done",
      "--ws",
      server.url,
      "--dir",
      journal.dir,
      "--seq",
      String(at.seq),
      "--json",
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      macrosteps: steps.length,
      messages: 1 + 2 * steps.length,
      toSeq: at.seq,
    });
    await server.until((m) => m.length === 1 + 2 * steps.length);
    const snapshots = server.messages.filter((m) => m.type === "@xstate.snapshot");
    expect(snapshots.at(-1)!.snapshot).toMatchObject({ status: "active", value: at.to });
    // A seq inside a macrostep (its input record) plays the whole macrostep.
    server.messages.length = 0;
    const inside = await cli([
      "inspect",
      "research-done",
      "--ws",
      server.url,
      "--dir",
      journal.dir,
      "--seq",
      String(at.seq - 1),
      "--json",
    ]);
    expect(JSON.parse(inside.stdout)).toMatchObject({ macrosteps: steps.length, toSeq: at.seq });
    for (const bad of ["0", String(records.at(-1)!.seq + 1), "x"]) {
      const refused = await cli(["inspect", "research-done", "--ws", server.url, "--dir", journal.dir, "--seq", bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--seq must be a seq of the journal, 1 to ${records.at(-1)!.seq}`);
    }
  });

  it("fails with a clear message when no inspector is listening (1)", async () => {
    const { code, stderr } = await cli([
      "inspect",
      "research-done",
      "--ws",
      "ws://127.0.0.1:9",
      "--timeout-ms",
      "300",
      "--dir",
      journal.dir,
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain("loomwork inspect: could not deliver to the inspector at ws://127.0.0.1:9 within 300 ms");
    expect(stderr).toContain("createInspectorServer");
  });
});
