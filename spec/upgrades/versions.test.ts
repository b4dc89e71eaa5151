// Version identity: an execution journals its logic's id, hash and declared version; an app holds several
// versions of one logic; a resume runs the version the execution started on (or is refused before any
// record is replayed); a start by id runs the newest. Across a process restart on fs.
import type { InspectionEvent } from "xstate";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { ConfigError, UnknownLogicVersionError } from "../../actors/errors.js";
import { declaredVersionOf, machineHashOf } from "../../actors/journal/versions.js";
import { RUNTIME_ERROR_CODES } from "../../actors/constants.js";
import { LoomworkError } from "../../stores/errors.js";
import { fsStores } from "../../adapters/fs/index.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_SCHEMA, EXECUTION_STARTED } from "../../stores/schema.js";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { countedEffects, flow, removeTempDirs, tempDir } from "./support.js";
import { checkReplay } from "../../upgrades.js";

afterAll(removeTempDirs);

const v1 = flow({ version: "1" });
const v2 = flow({ version: "2", shape: "review" });

// Starts `run-old` on v1 and parks it in `waiting`, then closes the app (the process ends).
async function parkOnV1(dir: string): Promise<void> {
  const stores = await fsStores({ dir });
  const { effects } = countedEffects();
  const app = createApp(defineConfig({ stores, effects, logics: [v1] }));
  const actor = await app.start(v1, { executionId: "run-old", input: { name: "old" } });
  await actor.settled();
  expect(actor.getSnapshot().value).toBe("waiting");
  await app.close();
  await stores.close();
}

describe("version identity", () => {
  it("journals the logic id, its definition hash and its declared version in EXECUTION_STARTED", async () => {
    const stores = memoryStores();
    const { effects } = countedEffects();
    const app = createApp(defineConfig({ stores, effects }));
    await app.start(v2, { executionId: "a", input: { name: "a" } });
    await app.start(flow(), { executionId: "b", input: { name: "b" } });
    const [startedA] = await app.log("a");
    const [startedB] = await app.log("b");
    expect(startedA).toMatchObject({
      type: EXECUTION_STARTED,
      logicId: "flow",
      version: "2",
      machineHash: await machineHashOf(v2),
      schema: EVENT_SCHEMA.version,
    });
    // A logic that declares no version journals none: its hash is its identity.
    expect(startedB).toMatchObject({
      type: EXECUTION_STARTED,
      logicId: "flow",
      machineHash: await machineHashOf(flow()),
    });
    expect(startedB).not.toHaveProperty("version");
    expect(await stores.events.getExecution("a")).toMatchObject({
      logicId: "flow",
      version: "2",
      machineHash: await machineHashOf(v2),
    });
    await app.close();
  });

  it("reads a version from createMachine({ version }), meta.version and agentLoop$({ version })", () => {
    expect(declaredVersionOf(flow({ version: "7" }))).toBe("7");
    expect(declaredVersionOf(flow({ version: "8", versionIn: "meta" }))).toBe("8");
    expect(declaredVersionOf(flow())).toBeUndefined();
    expect(declaredVersionOf(agentLoop$({ id: "agent", model: "model", version: "3" }))).toBe("3");
    expect(() => agentLoop$({ id: "agent", model: "model", version: "" })).toThrow(ConfigError);
  });

  it("an execution parked on v1 finishes on v1 after the app moved to v2; new starts run v2; both journals replay", async () => {
    const dir = await tempDir("v1-v2");
    await parkOnV1(dir);

    // The next deploy holds both versions, v2 the newest.
    const stores = await fsStores({ dir });
    const counted = countedEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [v1, v2] }));
    const old = await app.resume("run-old");
    expect(old.replay.stepsServedFromLog).toBe(1);
    old.send({ type: "CONTINUE" });
    await old.settled();
    old.send({ type: "CLOSE" });
    // v1 has no review step: the old execution finished on v1.
    expect(await app.result("run-old")).toEqual({ trail: ["old", "done:prepare", "done:finish"] });

    const fresh = await app.start("flow", { executionId: "run-new", input: { name: "new" } });
    await fresh.settled();
    fresh.send({ type: "CONTINUE" });
    await fresh.settled();
    fresh.send({ type: "CLOSE" });
    expect(await app.result("run-new")).toEqual({ trail: ["new", "done:prepare", "done:review", "done:finish"] });
    expect((await app.log("run-new"))[0]).toMatchObject({ version: "2" });
    expect(counted.runs.get("flow#prepare:1")).toBe(1); // only run-new's prepare ran here: run-old's was served from its log
    await app.close();
    await stores.close();

    // Another restart: both journals replay to their ends, each on its own version, running nothing.
    const reopened = await fsStores({ dir });
    const again = countedEffects();
    const replayer = createApp(defineConfig({ stores: reopened, effects: again.effects, logics: [v1, v2] }));
    for (const id of ["run-old", "run-new"]) {
      const actor = await replayer.resume(id);
      expect(actor.getSnapshot().status).toBe("done");
    }
    expect(again.total()).toBe(0);
    expect((await checkReplay(replayer, v1, { executionIds: ["run-old"] })).ok).toBe(true);
    expect((await checkReplay(replayer, v2, { executionIds: ["run-new"] })).ok).toBe(true);
    await replayer.close();
    await reopened.close();
  });

  it("refuses a resume whose version the app lacks before any record is replayed, naming the execution and the versions", async () => {
    const dir = await tempDir("unknown-version");
    await parkOnV1(dir);
    const stores = await fsStores({ dir });
    const counted = countedEffects();
    const inspected: InspectionEvent[] = [];
    const app = createApp(
      defineConfig({
        stores,
        effects: counted.effects,
        logics: [v2, flow({ version: "3" })],
        observability: { inspect: (e) => inspected.push(e) },
      }),
    );
    const refused = await app.resume("run-old").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnknownLogicVersionError);
    expect(refused).toBeInstanceOf(LoomworkError);
    expect(refused).toMatchObject({
      code: RUNTIME_ERROR_CODES.unknownLogicVersion,
      executionId: "run-old",
      logicId: "flow",
      version: "1",
      available: ["2", "3"],
    });
    expect((refused as Error).message).toContain('Execution "run-old" started on version "1" of logic "flow"');
    expect((refused as Error).message).toContain('"2", "3"');
    // Nothing was replayed, nothing ran, nothing was written.
    expect(inspected).toEqual([]);
    expect(counted.total()).toBe(0);
    expect(await stores.events.head("run-old")).toBe((await app.log("run-old")).length);
    expect((await app.log("run-old")).at(-1)).toMatchObject({ type: "loom.transition", to: "waiting" });
    // Passing the wrong version by hand is refused the same way.
    await expect(app.resume("run-old", v2)).rejects.toMatchObject({
      code: RUNTIME_ERROR_CODES.unknownLogicVersion,
      available: ["2"],
    });
    // And the right one resumes it.
    const actor = await app.resume("run-old", v1);
    expect(actor.getSnapshot().value).toBe("waiting");
    expect(inspected.length).toBeGreaterThan(0); // a replay is seen by the inspector: the refusal above replayed nothing
    await app.close();
    await stores.close();
  });

  it("an execution that declared no version resumes on the held definition with its hash, else on the newest", async () => {
    const stores = memoryStores();
    const plain = flow();
    const review = flow({ shape: "review" });
    const { effects } = countedEffects();
    const first = createApp(defineConfig({ stores, effects }));
    await (await first.start(plain, { executionId: "u", input: { name: "u" } })).settled();
    await first.close();

    // Both unversioned definitions held, the changed one newest: the hash picks the one it started on.
    const both = createApp(defineConfig({ stores, effects, logics: [plain, review] }));
    const resumed = await both.resume("u");
    resumed.send({ type: "CONTINUE" });
    await resumed.settled();
    expect(resumed.getSnapshot().value).toBe("closing");
    expect(resumed.getSnapshot().context.trail).toEqual(["u", "done:prepare", "done:finish"]);
    await both.close();

    // Holding only the changed definition, a second unversioned execution resumes on it (the newest): it reviews.
    const again = createApp(defineConfig({ stores, effects }));
    await (await again.start(plain, { executionId: "u2", input: { name: "u2" } })).settled();
    await again.close();
    const moved = createApp(defineConfig({ stores, effects, logics: [review] }));
    const onNewest = await moved.resume("u2");
    onNewest.send({ type: "CONTINUE" });
    await onNewest.settled();
    expect(onNewest.getSnapshot().context.trail).toEqual(["u2", "done:prepare", "done:review", "done:finish"]);
    await moved.close();
  });

  it("refuses two different definitions of one logic id and version in logics, at createApp", () => {
    const { effects } = countedEffects();
    expect(() =>
      createApp(
        defineConfig({
          stores: memoryStores(),
          effects,
          logics: [flow({ version: "1" }), flow({ version: "1", shape: "review" })],
        }),
      ),
    ).toThrow(/two definitions of logic "flow" declare version "1"/);
    // The same object twice, or two undeclared definitions, are fine.
    expect(() =>
      createApp(defineConfig({ stores: memoryStores(), effects, logics: [v1, v1, flow(), flow({ shape: "review" })] })),
    ).not.toThrow();
  });

  it("a start by logic id runs its newest version, and refuses an id no logic has", async () => {
    const { effects } = countedEffects();
    const app = createApp(defineConfig({ stores: memoryStores(), effects, logics: [v1, v2] }));
    await app.start("flow", { executionId: "n", input: { name: "n" } });
    expect((await app.log("n"))[0]).toMatchObject({ version: "2" });
    await expect(app.start("nope", { executionId: "x" })).rejects.toThrow(ConfigError);
    // A logic passed by hand runs as given, even an older version.
    await app.start(v1, { executionId: "o", input: { name: "o" } });
    expect((await app.log("o"))[0]).toMatchObject({ version: "1" });
    await app.close();
  });

  it("keeps the version readable for the catalogue when the execution's records are sealed", async () => {
    const stores = memoryStores();
    const { effects } = countedEffects();
    const app = createApp(
      defineConfig({ stores, effects, logics: [v1, v2], security: { crypto: { keys: stores.keys } } }),
    );
    await (await app.start(v1, { executionId: "s", subject: "user-1", input: { name: "s" } })).settled();
    await app.close();
    const [raw] = await stores.events.read("s");
    expect(raw).toMatchObject({ logicId: "flow", version: "1" });
    expect(raw).not.toHaveProperty("input"); // the payload is sealed
    const next = createApp(
      defineConfig({ stores, effects, logics: [v1, v2], security: { crypto: { keys: stores.keys } } }),
    );
    expect((await next.resume("s")).getSnapshot().value).toBe("waiting");
    await next.close();
  });
});
