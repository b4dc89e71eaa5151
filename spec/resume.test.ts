// Kill the first app at every seq of the log, resume in a fresh app: same output, nothing recorded re-run.
import { describe, expect, it } from "vitest";
import { createApp, type App } from "../actors/app.js";
import { simulatedClock, type SimulatedClock } from "../actors/clock.js";
import { defineConfig } from "../actors/config.js";
import type { JournaledActor } from "../actors/journal/actor.js";
import { memoryStores } from "../stores/memory.js";
import { STEP_COMPLETED } from "../stores/schema.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects, DyingEventStore, withEvents } from "./support/harness.js";

type Path = "approve" | "timer";

async function drive(app: App, actor: JournaledActor, clock: SimulatedClock, path: Path): Promise<unknown> {
  await actor.settled();
  if (actor.getSnapshot().matches("waiting")) {
    if (path === "approve") await actor.sendAsync({ type: "APPROVE" });
    else clock.advance(1_000);
  }
  await actor.settled();
  return app.result(actor.executionId);
}

async function uninterrupted(path: Path) {
  const stores = memoryStores();
  const clock = simulatedClock(10_000);
  const { effects, runs } = countedDemoEffects();
  const app = createApp(defineConfig({ stores, effects, clock }));
  const actor = await app.start(demoMachine, { executionId: "run", input: { topic: "owls" } });
  const output = await drive(app, actor, clock, path);
  return { output, log: await app.log("run"), runs };
}

describe.each<Path>(["approve", "timer"])("resume after a crash at every seq (%s path)", (path) => {
  it("ends with the uninterrupted output and re-runs no recorded effect", async () => {
    const baseline = await uninterrupted(path);
    expect(baseline.log.at(-1)).toMatchObject({ type: "loom.execution.ended", status: "done" });
    const lastSeq = baseline.log.at(-1)!.seq;
    for (let crashAfter = 0; crashAfter < lastSeq; crashAfter++) {
      const stores = memoryStores();
      const clock = simulatedClock(10_000);
      const counted = countedDemoEffects();
      const app1 = createApp(
        defineConfig({
          stores: withEvents(stores, new DyingEventStore(stores.events, crashAfter)),
          effects: counted.effects,
          clock,
        }),
      );
      try {
        const actor = await app1.start(demoMachine, { executionId: "run", input: { topic: "owls" } });
        await drive(app1, actor, clock, path).catch(() => undefined);
      } catch {
        // The first write itself "died": nothing of the execution exists.
      }
      await app1.close();
      const survived = await stores.events.read("run");
      const recordedSteps = survived.filter((r) => r.type === STEP_COMPLETED).map((r) => r.stepId as string);
      const runsBefore = new Map(counted.runs);

      const app2 = createApp(defineConfig({ stores, effects: counted.effects, clock, logics: [demoMachine] }));
      const actor =
        survived.length === 0
          ? await app2.start(demoMachine, { executionId: "run", input: { topic: "owls" } })
          : await app2.resume("run");
      const output = await drive(app2, actor, clock, path);

      expect(output, `crash after seq ${crashAfter}`).toEqual(baseline.output);
      for (const stepId of recordedSteps) {
        expect(counted.runs.get(stepId), `${stepId} was recorded before the crash at ${crashAfter}`).toBe(
          runsBefore.get(stepId),
        );
        expect(runsBefore.get(stepId)).toBe(1);
      }
      for (const [stepId, n] of counted.runs)
        expect(n, `${stepId} after crash at ${crashAfter}`).toBeLessThanOrEqual(2);
      const finalLog = await app2.log("run");
      expect(finalLog.map((r) => r.seq)).toEqual(finalLog.map((_, i) => i + 1));
      expect(finalLog.map((r) => [r.type, r.stepId, r.to])).toEqual(baseline.log.map((r) => [r.type, r.stepId, r.to]));
      await app2.close();
    }
  });
});

describe("resume", () => {
  it("re-runs a step that started without an outcome, with the same idempotency key", async () => {
    const stores = memoryStores();
    const seen: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const effects = {
      research: {
        kind: "tool" as const,
        run: async (_: unknown, ctx: { idempotencyKey: string }) => {
          seen.push(ctx.idempotencyKey);
          await blocked;
          return "late";
        },
      },
      write: countedDemoEffects().effects.write,
    };
    const app1 = createApp(defineConfig({ stores, effects }));
    await app1.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await app1.close(); // the process dies while "research" runs
    release();
    const app2 = createApp(defineConfig({ stores, effects, logics: [demoMachine] }));
    const actor = await app2.resume("r");
    expect(actor.replay.stepsToRun).toBe(1);
    await actor.settled();
    expect(seen).toEqual(["r/demo#research:1", "r/demo#research:1"]);
    expect(actor.getSnapshot().value).toBe("waiting");
    await app2.close();
  });

  it("serves every recorded step from the log: a resumed finished run runs no effect", async () => {
    const stores = memoryStores();
    const clock = simulatedClock(0);
    const first = countedDemoEffects();
    const app1 = createApp(defineConfig({ stores, effects: first.effects, clock }));
    const actor1 = await app1.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await drive(app1, actor1, clock, "approve");
    const second = countedDemoEffects();
    const app2 = createApp(defineConfig({ stores, effects: second.effects, clock, logics: [demoMachine] }));
    const actor2 = await app2.resume("r");
    expect(second.runs.size).toBe(0);
    expect(actor2.replay).toMatchObject({ stepsServedFromLog: 2, stepsToRun: 0 });
    expect(actor2.getSnapshot().status).toBe("done");
    expect(await app2.result("r")).toEqual(await app1.result("r"));
  });

  it("re-arms a journaled timer at its journaled due time", async () => {
    const stores = memoryStores();
    const clock = simulatedClock(5_000);
    const { effects } = countedDemoEffects();
    const app1 = createApp(defineConfig({ stores, effects, clock }));
    const actor1 = await app1.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    await actor1.settled();
    await app1.close();
    const log = await stores.events.read("r");
    expect(log.find((r) => r.type === "loom.timer.set")).toMatchObject({ dueAt: 6_000 });
    clock.advance(400);
    const app2 = createApp(defineConfig({ stores, effects, clock, logics: [demoMachine] }));
    const actor2 = await app2.resume("r");
    clock.advance(599);
    await actor2.settled();
    expect(actor2.getSnapshot().value).toBe("waiting");
    clock.advance(1);
    await actor2.settled();
    expect(actor2.getSnapshot().status).toBe("done");
  });
});
