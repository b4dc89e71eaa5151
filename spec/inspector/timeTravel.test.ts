// replayIntoInspector: a stored journal replayed to an inspector up to a seq (time travel), as the live
// path told it: the execution's actor, its events and snapshots, and its children, up to that point only.
import { createInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import { describe, expect, it } from "vitest";
import {
  createApp,
  createToolEffect,
  defineConfig,
  memoryStores,
  replayIntoInspector,
  TRANSITION,
} from "../../index.js";
import { parent } from "../children/machines.js";
import { RESEARCH_QUESTION, researchAgent, researchEffects } from "../../stories/support/researchAgent.js";

const tick = () => new Promise((r) => setTimeout(r, 30));

async function journal() {
  const stores = memoryStores();
  const live: StatelyInspectionEvent[] = [];
  const inspector = createInspector({ send: (event) => void live.push(event) });
  const app = createApp(
    defineConfig({
      stores,
      effects: researchEffects({ modelMs: 1, toolMs: 1 }),
      observability: { inspect: inspector.inspect },
    }),
  );
  await app.start(researchAgent, { executionId: "tt-1", input: { prompt: RESEARCH_QUESTION } });
  await app.result("tt-1");
  await app.close();
  await tick();
  return { stores, live, records: await stores.events.read("tt-1") };
}

const shape = (e: StatelyInspectionEvent) => [
  e.type,
  e.sessionId,
  "name" in e ? e.name : undefined,
  e.type === "@xstate.event" ? e.event.type : undefined,
];

describe("replayIntoInspector", () => {
  it("replays the whole journal as the live run told the inspector", async () => {
    const { stores, live } = await journal();
    const sent: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void sent.push(event) });
    const replay = await replayIntoInspector(stores.events, "tt-1", {
      logic: researchAgent,
      inspect: inspector.inspect,
    });
    await tick();
    expect(sent.map(shape)).toEqual(live.map(shape));
    expect(replay.toSeq).toBe(await stores.events.head("tt-1"));
  });

  it("stops at the macrostep that holds toSeq: the state, and only the children, of that moment", async () => {
    const { stores, live, records } = await journal();
    const transitions = records.filter((r) => r.type === TRANSITION);
    for (const [k, at] of [transitions[3]!, transitions[7]!].entries()) {
      const sent: StatelyInspectionEvent[] = [];
      const inspector = createInspector({ send: (event) => void sent.push(event) });
      // The input record's seq (inside the macrostep) takes the macrostep whole.
      const replay = await replayIntoInspector(stores.events, "tt-1", {
        logic: researchAgent,
        inspect: inspector.inspect,
        toSeq: at.seq - 1,
      });
      await tick();
      expect(replay).toEqual({ toSeq: at.seq, macrosteps: transitions.indexOf(at) + 1 });
      const own = sent.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === "loom:tt-1");
      expect(own.at(-1)).toMatchObject({ snapshot: { status: "active", value: at.to } });
      expect(own).toHaveLength(transitions.indexOf(at) + 1);
      // What the inspector was told is the live run's prefix.
      expect(sent.map(shape)).toEqual(live.slice(0, sent.length).map(shape));
      expect(sent.length, `step ${k}`).toBeLessThan(live.length);
    }
  });

  it("replays a parent whose child machine invokes an effect (the child's effects are registered too)", async () => {
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: { double: createToolEffect(async (n: number) => n * 2) } }));
    await app.start(parent, { executionId: "tree" });
    await app.result("tree");
    await app.close();
    const sent: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void sent.push(event) });
    const replay = await replayIntoInspector(stores.events, "tree", { logic: parent, inspect: inspector.inspect });
    await tick();
    expect(replay.toSeq).toBe(await stores.events.head("tree"));
    expect(sent.some((event) => event.type === "@xstate.snapshot")).toBe(true);
  });

  it("refuses a seq outside the journal and an unknown execution", async () => {
    const { stores, records } = await journal();
    const inspect = () => undefined;
    await expect(
      replayIntoInspector(stores.events, "tt-1", { logic: researchAgent, inspect, toSeq: 0 }),
    ).rejects.toThrow(`toSeq must be a seq of the journal, 1 to ${records.length}; got 0`);
    await expect(
      replayIntoInspector(stores.events, "tt-1", { logic: researchAgent, inspect, toSeq: records.length + 1 }),
    ).rejects.toThrow(RangeError);
    await expect(replayIntoInspector(stores.events, "nope", { logic: researchAgent, inspect })).rejects.toThrow(
      'execution "nope" has no records',
    );
  });
});
