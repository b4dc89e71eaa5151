// The devtools model (adapters/devtools/model.ts, load.ts): the statechart, the timeline, the state at a seq
// from the journal alone, the pending approvals and the tree, over the research agent, a plain machine and a
// tree of executions.
import { describe, expect, it } from "vitest";
import { createApp, defineConfig, EVENT_RECEIVED, memoryStores, STEP_COMPLETED, TRANSITION } from "../../index.js";
import {
  activeNodeIds,
  loadModel,
  loadTree,
  stateAtSeq,
  timelineOf,
  valueText,
} from "../../adapters/devtools/index.js";
import { RESEARCH_QUESTION, researchAgent, researchEffects } from "../../stories/support/researchAgent.js";
import { parent } from "../children/machines.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { devtoolsApp, kettle, runKettle, tidy } from "./machines.js";

describe("the devtools model", () => {
  it("draws a plain machine's nested and parallel states and its transitions, and travels to any seq", async () => {
    const stores = memoryStores();
    const app = devtoolsApp(stores);
    await runKettle(app, "k1");
    await app.close();
    const model = await loadModel(stores.events, "k1", { logics: [kettle] });
    expect(model.graph.from).toBe("logic");
    const node = (id: string) => model.graph.nodes.find((n) => n.id === id);
    expect(node("kettle.heating")).toMatchObject({ type: "compound", parent: "kettle" });
    expect(node("kettle.heating.warming")).toMatchObject({ type: "atomic", initial: true, parent: "kettle.heating" });
    expect(node("kettle.pouring")).toMatchObject({ type: "parallel" });
    expect(node("kettle.pouring.cup")).toMatchObject({ type: "compound", parent: "kettle.pouring" });
    expect(node("kettle.pouring.lid")).not.toHaveProperty("initial");
    const edges = model.graph.transitions.map((t) => `${t.source} -${t.event}-> ${t.target}`);
    expect(edges).toContain("kettle.idle -SWITCH_ON-> kettle.heating");
    expect(edges).toContain("kettle.heating -POUR-> kettle.pouring");
    expect(edges).toContain("kettle.pouring.cup.filling -DONE-> kettle.pouring.cup.full");
    expect(edges.some((e) => /^kettle\.heating\.boiling -xstate\.after\.cool.*-> kettle\.idle$/.test(e))).toBe(true);

    // One state per macrostep (start and three events); the last one is parallel, with its context.
    expect(model.states.map((s) => valueText(s.value))).toEqual([
      "idle",
      "heating.warming",
      "heating.boiling",
      "pouring.cup.filling, pouring.lid.open",
    ]);
    expect(model.states.at(-1)!.context).toEqual({ cups: 1 });
    expect(model.status).toBe("running");
    // Time travel: the state at a seq inside the second macrostep is that macrostep's.
    const second = model.states[1]!;
    expect(stateAtSeq(model, second.fromSeq)).toBe(second);
    expect(stateAtSeq(model, second.toSeq)).toBe(second);
    expect([...activeNodeIds("kettle", model.states.at(-1)!.value)].sort()).toEqual([
      "kettle",
      "kettle.pouring",
      "kettle.pouring.cup",
      "kettle.pouring.cup.filling",
      "kettle.pouring.lid",
      "kettle.pouring.lid.open",
    ]);
    // The timeline lists every record, the timer the boiling state armed among them.
    expect(model.timeline.map((e) => e.seq)).toEqual(model.timeline.map((_, i) => i + 1));
    expect(model.timeline.find((e) => e.kind === "timer")?.label).toMatch(/^timer xstate\.after\.cool/);
    expect(model.timeline.filter((e) => e.kind === "event").map((e) => e.label)).toEqual([
      "SWITCH_ON",
      "BOILED",
      "POUR",
    ]);
  });

  it("infers the statechart and the states from the TRANSITION records without the machine", async () => {
    const stores = memoryStores();
    const app = devtoolsApp(stores);
    await runKettle(app, "k2");
    await app.close();
    const model = await loadModel(stores.events, "k2");
    expect(model.graph.from).toBe("journal");
    expect(model.note).toMatch(/No machine "kettle"/);
    expect(model.graph.transitions.map((t) => `${t.source} -${t.event}-> ${t.target}`)).toContain(
      "kettle.idle -SWITCH_ON-> kettle.heating.warming",
    );
    expect(valueText(model.states.at(-1)!.value)).toBe("pouring.cup.filling, pouring.lid.open");
    expect(model.states.at(-1)).not.toHaveProperty("context");
  });

  it("shows the research agent: its effects, every step with its outcome, the context at a past seq", async () => {
    const stores = memoryStores();
    const app = createApp(defineConfig({ stores, effects: researchEffects({ modelMs: 1, toolMs: 1 }) }));
    await app.start(researchAgent, { executionId: "r1", input: { prompt: RESEARCH_QUESTION } });
    await app.result("r1");
    await app.close();
    const records = await stores.events.read("r1");
    const model = await loadModel(stores.events, "r1", { logics: [researchAgent] });
    expect(model.status).toBe("done");
    expect(model.head).toBe(records.at(-1)!.seq);
    expect(model.graph.nodes.flatMap((n) => n.invokes.map((i) => i.src))).toContain("model");
    const steps = model.timeline.filter((e) => e.kind === "step");
    expect(steps.length).toBe(records.filter((r) => r.type === STEP_COMPLETED).length);
    expect(steps.every((s) => s.outcome === "completed")).toBe(true);
    expect(model.replay).toEqual({ stepsServedFromLog: steps.length, stepsInFlight: [] });
    // The state at a past seq: that macrostep's value and context, from the journal alone.
    const transitions = records.filter((r) => r.type === TRANSITION);
    expect(model.states.length).toBe(transitions.length);
    const past = stateAtSeq(model, transitions[3]!.seq)!;
    expect(valueText(past.value)).toBe(String(transitions[3]!.to));
    expect(past.context).toMatchObject({ turn: expect.any(Number) });
    expect(JSON.stringify(past.context).length).toBeLessThan(JSON.stringify(model.states.at(-1)!.context).length);
  });

  it("lists the tool call that waits for approval, and none once it is decided", async () => {
    const stores = memoryStores();
    const app = devtoolsApp(stores);
    const actor = await app.start(tidy, { executionId: "t1", input: { prompt: "Archive the paid invoices." } });
    let model = await loadModel(stores.events, "t1", { logics: [tidy] });
    for (let i = 0; i < 200 && model.pending.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      model = await loadModel(stores.events, "t1", { logics: [tidy] });
    }
    expect(model.pending).toEqual([
      { toolCallId: "call_archive", toolName: "archive", input: { name: "billing.eml" }, stepId: expect.any(String) },
    ]);
    actor.send({ type: "TOOL_APPROVAL", toolCallId: "call_archive", approved: true });
    await app.result("t1");
    await app.close();
    expect((await loadModel(stores.events, "t1", { logics: [tidy] })).pending).toEqual([]);
  });

  it("builds the tree of executions from the children's start records", async () => {
    const stores = memoryStores();
    const effects = { double: createToolEffect(async (n: number) => n * 2) };
    const app = createApp(defineConfig({ stores, effects }));
    await app.start(parent, { executionId: "p1" });
    await app.result("p1");
    await app.close();
    const tree = await loadTree(stores.events);
    expect(tree).toEqual([
      expect.objectContaining({
        executionId: "p1",
        logicId: "parent",
        status: "done",
        children: [
          expect.objectContaining({
            executionId: "p1/w",
            logicId: "worker",
            parent: "p1",
            childId: "w",
            children: [],
          }),
        ],
      }),
    ]);
    const model = await loadModel(stores.events, "p1", { logics: [parent] });
    // The parent replays although its child machine invokes an effect of its own (double): each state has its context.
    expect(model.note).toBeUndefined();
    expect(model.states.at(-1)!.context).toEqual({ seen: ["progress", "pong"], result: { doubled: 42 } });
    expect(model.graph.nodes.find((n) => n.id === "parent.running")!.invokes).toEqual([
      { id: "w", src: "worker", kind: "machine" },
    ]);
  });

  it("shows a sealed record by its type only", () => {
    expect(timelineOf([{ seq: 1, at: 0, type: EVENT_RECEIVED, sealed: "AAAA" }])).toEqual([
      { seq: 1, at: 0, macrostep: 0, kind: "event", label: "loom.event.received (sealed)" },
    ]);
  });
});
