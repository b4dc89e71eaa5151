// observability.inspect receives standard XState inspection events for every journaled actor, live and
// replayed; @statelyai/inspect turns them into messages that carry the machine definition, headless
// (createInspector) and over a WebSocket (createWebSocketInspector against a ws server on 127.0.0.1).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInspector, createWebSocketInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import {
  createApp,
  defineConfig,
  EVENT_RECEIVED,
  EXECUTION_STARTED,
  memoryStores,
  STEP_COMPLETED,
  STEP_FAILED,
  TRANSITION,
  type StoredRecord,
  type Stores,
} from "../../index.js";
import { RESEARCH_QUESTION, researchAgent, researchEffects } from "../../stories/support/researchAgent.js";
import { inspectorServer } from "./support.js";
import { expandRecords } from "../../stores/recordFormat.js";

const INPUTS = new Set([EXECUTION_STARTED, EVENT_RECEIVED, STEP_COMPLETED, STEP_FAILED]);
const input = { prompt: RESEARCH_QUESTION };
const tick = () => new Promise((r) => setTimeout(r, 30));
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** The event types the journal says each macrostep processed, in order (read from the stored form of schema 3, as app.log does). */
function journaledEvents(records: StoredRecord[]): string[] {
  return expandRecords(records)
    .filter((r) => r.type === TRANSITION)
    .map((r) => String(r.event));
}

/** Runs the research agent until `turns` turns are journaled, then closes the app (as a quit would). */
async function runPartly(stores: Stores, executionId: string, turns: number): Promise<void> {
  const app = createApp(defineConfig({ stores, effects: researchEffects({ modelMs: 30, toolMs: 1 }) }));
  let ended = 0;
  const done = new Promise<void>((resolve) =>
    app.on(
      "append",
      ({ records }) =>
        records.some((r) => r.type === TRANSITION && r.from === "acting" && r.to !== "acting") &&
        ++ended === turns &&
        resolve(),
    ),
  );
  await app.start(researchAgent, { executionId, input });
  await done;
  await app.close();
}

type SnapshotEvent = Extract<StatelyInspectionEvent, { type: "@xstate.snapshot" }>;
/** The snapshots of one session (an execution's own, not its children's). */
const snapshotsOf = (sent: StatelyInspectionEvent[], sessionId: string) =>
  sent.filter((e): e is SnapshotEvent => e.type === "@xstate.snapshot" && e.sessionId === sessionId);

function expectDefinition(event: Record<string, any>) {
  expect(event.type).toBe("@xstate.actor");
  const definition = JSON.parse(String(event.definition));
  expect(definition.id).toBe("researcher");
  expect(Object.keys(definition.states)).toEqual(
    expect.arrayContaining(["deciding", "compacting", "thinking", "routing", "acting", "done"]),
  );
  expect(definition.states.thinking.invoke).toMatchObject({ src: "model", id: "model" });
}

describe("inspection events, headless (createInspector)", () => {
  it("a live run: the actor with its definition, then one event and one snapshot per macrostep", async () => {
    const sent: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void sent.push(event) });
    const stores = memoryStores();
    const app = createApp(
      defineConfig({
        stores,
        effects: researchEffects({ modelMs: 1, toolMs: 1 }),
        observability: { inspect: inspector.inspect },
      }),
    );
    await app.start(researchAgent, { executionId: "live-1", input });
    await app.result("live-1");
    await tick();
    const records = await stores.events.read("live-1");
    expectDefinition(sent[0]!);
    expect(sent[0]).toMatchObject({ sessionId: "loom:live-1", name: "live-1", rootId: "loom:live-1" });
    const events = sent.filter((e) => e.type === "@xstate.event");
    // The execution's own snapshots (its children's are theirs: see "child actors" below).
    const snapshots = snapshotsOf(sent, "loom:live-1");
    expect(events.map((e) => e.event.type)).toEqual(journaledEvents(records));
    expect(events).toHaveLength(records.filter((r) => INPUTS.has(r.type)).length);
    expect(snapshots.map((s) => (s.snapshot as unknown as { value: unknown }).value)).toEqual(
      records.filter((r) => r.type === TRANSITION).map((r) => r.to),
    );
    expect(snapshots.at(-1)!.snapshot).toMatchObject({ status: "done", output: { turns: 6 } });
    expect(
      sent.every(
        (e) => (e.sessionId === "loom:live-1" || e.sessionId.startsWith("loom:live-1/")) && e.rootId === "loom:live-1",
      ),
    ).toBe(true);
    await app.close();
  });

  it("a resumed run: the journal's macrosteps are replayed to the inspector, then the live ones follow", async () => {
    const stores = memoryStores();
    await runPartly(stores, "resumed-1", 2);
    const before = await stores.events.read("resumed-1");
    const sent: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void sent.push(event) });
    const app = createApp(
      defineConfig({
        stores,
        effects: researchEffects({ modelMs: 1, toolMs: 1 }),
        logics: [researchAgent],
        observability: { inspect: inspector.inspect },
      }),
    );
    const actor = await app.resume("resumed-1");
    await app.result("resumed-1");
    await tick();
    expectDefinition(sent[0]!);
    const events = sent.filter((e) => e.type === "@xstate.event").map((e) => e.event.type);
    const replayed = journaledEvents(before);
    expect(actor.replay.recordsReplayed).toBe(before.length);
    expect(events.slice(0, replayed.length)).toEqual(replayed);
    expect(events).toEqual(journaledEvents(await stores.events.read("resumed-1")));
    expect(snapshotsOf(sent, "loom:resumed-1").at(-1)!.snapshot).toMatchObject({ status: "done" });
    await app.close();
  });
});

describe("child actors (the steps a snapshot lists)", () => {
  it("are announced with the execution as parent, and end with their outcome", async () => {
    const sent: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void sent.push(event) });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: researchEffects({ modelMs: 1, toolMs: 1 }),
        observability: { inspect: inspector.inspect },
      }),
    );
    await app.start(researchAgent, { executionId: "kids-1", input });
    await app.result("kids-1");
    await tick();
    const actors = sent.filter((e) => e.type === "@xstate.actor");
    // One naming rule: the execution's actor is named after the execution id; a child after its id.
    expect(actors[0]).toMatchObject({ name: "kids-1", sessionId: "loom:kids-1", parentId: undefined });
    const kids = actors.slice(1);
    expect(kids.length).toBeGreaterThan(6);
    expect(
      kids.every(
        (k) =>
          k.parentId === "loom:kids-1" &&
          k.rootId === "loom:kids-1" &&
          k.sessionId ===
            `loom:kids-1/${k.name}${k.sessionId.includes("#") ? k.sessionId.slice(k.sessionId.indexOf("#")) : ""}`,
      ),
    ).toBe(true);
    // The model step is invoked again each turn: a new child session per run; each tool call is a child of its own.
    expect(kids.filter((k) => k.name === "model").map((k) => k.sessionId)).toEqual([
      "loom:kids-1/model",
      "loom:kids-1/model#2",
      "loom:kids-1/model#3",
      "loom:kids-1/model#4",
      "loom:kids-1/model#5",
      "loom:kids-1/model#6",
    ]);
    expect(kids.map((k) => k.name)).toContain("tool:1:1");
    expect(JSON.parse(String(kids[0]!.definition))).toEqual({ id: "model" });
    // A child is announced after the parent's snapshot that lists it, and ends with the event that brings its outcome.
    const first = sent.findIndex((e) => e.type === "@xstate.actor" && e.sessionId === "loom:kids-1/model");
    expect(sent[first - 1]).toMatchObject({
      type: "@xstate.snapshot",
      sessionId: "loom:kids-1",
      event: { type: "xstate.init" },
    });
    const ends = sent.filter((e): e is SnapshotEvent => e.type === "@xstate.snapshot" && e.sessionId !== "loom:kids-1");
    expect(ends[0]).toMatchObject({
      sessionId: "loom:kids-1/model",
      event: { type: "xstate.done.actor.model" },
      snapshot: { status: "done", output: { toolCalls: [{ toolName: "search" }] } },
    });
    expect(ends.map((e) => e.sessionId).sort()).toEqual(kids.map((k) => k.sessionId).sort());
    expect(ends.every((e) => (e.snapshot as { status: string }).status === "done")).toBe(true);
    await app.close();
  });
});

describe("inspection events over a WebSocket (createWebSocketInspector, ws on 127.0.0.1)", () => {
  it("a live run on memory stores reaches the server with the machine definition", async () => {
    const server = await inspectorServer();
    const inspector = createWebSocketInspector({ url: server.url });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: researchEffects({ modelMs: 1, toolMs: 1 }),
        observability: { inspect: inspector.inspect },
      }),
    );
    try {
      await app.start(researchAgent, { executionId: "ws-live", input });
      await app.result("ws-live");
      await server.until((m) =>
        m.some((e) => e.type === "@xstate.snapshot" && e.sessionId === "loom:ws-live" && e.snapshot.status === "done"),
      );
      expectDefinition(server.messages[0]!);
      expect(server.messages[0]).toMatchObject({ sessionId: "loom:ws-live", _version: expect.any(String) });
      expect(server.messages.filter((m) => m.type === "@xstate.event").map((m) => m.event.type)).toContain(
        "xstate.done.actor.tool:1:1",
      );
    } finally {
      inspector.stop();
      await app.close();
      await server.close();
    }
  });

  it("a run resumed from fsStores in a fresh app is replayed to the server, then finishes live", async () => {
    const dir = await mkdtemp(join(tmpdir(), "loomwork-inspect-"));
    dirs.push(dir);
    const first = await fsStores({ dir });
    await runPartly(first, "ws-resumed", 1);
    await first.close();
    const server = await inspectorServer();
    const inspector = createWebSocketInspector({ url: server.url });
    const stores = await fsStores({ dir });
    const before = await stores.events.read("ws-resumed");
    const app = createApp(
      defineConfig({
        stores,
        effects: researchEffects({ modelMs: 1, toolMs: 1 }),
        logics: [researchAgent],
        observability: { inspect: (e) => inspector.inspect.next?.(e) },
      }),
    );
    try {
      await app.resume("ws-resumed");
      await app.result("ws-resumed");
      await server.until((m) =>
        m.some(
          (e) => e.type === "@xstate.snapshot" && e.sessionId === "loom:ws-resumed" && e.snapshot.status === "done",
        ),
      );
      expectDefinition(server.messages[0]!);
      const events = server.messages.filter((m) => m.type === "@xstate.event").map((m) => m.event.type);
      expect(events.slice(0, journaledEvents(before).length)).toEqual(journaledEvents(before));
      expect(events).toEqual(journaledEvents(await stores.events.read("ws-resumed")));
    } finally {
      inspector.stop();
      await app.close();
      await stores.close();
      await server.close();
    }
  });
});
