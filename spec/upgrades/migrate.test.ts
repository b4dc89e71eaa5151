// migrate(app, id, to): an execution parked on v1 is moved, explicitly and journaled, to v2 with its context
// mapped by the author; from then on it resumes on v2 (v1 no longer needed), across restarts on fs.
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { MigrationRefusedError } from "../../actors/errors.js";
import { RUNTIME_ERROR_CODES } from "../../actors/constants.js";
import { fsStores } from "../../adapters/fs/index.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_MIGRATED } from "../../stores/schema.js";
import type { Stores } from "../../stores/types.js";
import { countedEffects, flow, removeTempDirs, tempDir } from "./support.js";
import { checkReplay, migrate } from "../../upgrades.js";

afterAll(removeTempDirs);

const v1 = flow({ version: "1" });
const v2 = flow({ version: "2", shape: "review" });

async function parked(
  stores: Stores,
  executionId: string,
  options: { subject?: string; crypto?: boolean } = {},
): Promise<void> {
  const { effects } = countedEffects();
  const security = options.crypto ? { security: { crypto: { keys: stores.keys } } } : {};
  const app = createApp(defineConfig({ stores, effects, ...security }));
  await (
    await app.start(v1, {
      executionId,
      ...(options.subject ? { subject: options.subject } : {}),
      input: { name: executionId },
    })
  ).settled();
  await app.close();
}

describe("migrate(app, executionId, to)", () => {
  it("moves a parked v1 execution to v2 with its context mapped, journaled; it then finishes on v2 without v1, across restarts", async () => {
    const dir = await tempDir("migrate");
    let stores = await fsStores({ dir });
    await parked(stores, "m");
    await stores.close();

    stores = await fsStores({ dir });
    const counted = countedEffects();
    const app = createApp(defineConfig({ stores, effects: counted.effects, logics: [v1, v2] }));
    const result = await migrate(app, "m", v2, {
      migrate: ({ value, context, version }) => ({
        value,
        context: { trail: [...(context as { trail: string[] }).trail, `from ${version}`] },
      }),
    });
    expect(result).toEqual({ executionId: "m", fromVersion: "1", version: "2", seq: 5 });
    const log = await app.log("m");
    expect(log.at(-1)).toMatchObject({ seq: 5, type: EXECUTION_MIGRATED, fromVersion: "1", version: "2" });
    expect(await stores.events.getExecution("m")).toMatchObject({ version: "2" });
    expect(counted.total()).toBe(0);
    await app.close();
    await stores.close();

    // A deploy holding v2 only: the migrated execution resumes on it and takes v2's review step.
    stores = await fsStores({ dir });
    const onV2 = createApp(defineConfig({ stores, effects: counted.effects, logics: [v2] }));
    const actor = await onV2.resume("m");
    expect(actor.getSnapshot().value).toBe("waiting");
    await actor.sendAsync({ type: "CONTINUE" });
    await actor.settled();
    await actor.sendAsync({ type: "CLOSE" });
    expect(await onV2.result("m")).toEqual({ trail: ["m", "done:prepare", "from 1", "done:review", "done:finish"] });
    expect((await checkReplay(onV2, v2, { executionIds: ["m"] })).ok).toBe(true);
    await onV2.close();
    await stores.close();

    // Once more, from the journal alone: it replays from the migration, running nothing.
    stores = await fsStores({ dir });
    const again = countedEffects();
    const replayer = createApp(defineConfig({ stores, effects: again.effects, logics: [v2] }));
    expect((await replayer.resume("m")).getSnapshot().status).toBe("done");
    expect(again.total()).toBe(0);
    await replayer.close();
    await stores.close();
  });

  it("moves the execution to another state value; the old version's snapshot is replaced by the migrated state", async () => {
    const stores = memoryStores();
    const { effects } = countedEffects();
    const first = createApp(defineConfig({ stores, effects, execution: { snapshotEvery: 1 } }));
    await (await first.start(v1, { executionId: "renamed", input: { name: "r" } })).settled();
    await first.close();
    expect((await stores.events.getSnapshot("renamed"))?.seq).toBe(4);
    // The author moves it past the rest of the flow, to "closing".
    const v3 = flow({ version: "3" });
    const app = createApp(defineConfig({ stores, effects, logics: [v1, v3] }));
    await migrate(app, "renamed", v3, { migrate: () => ({ value: "closing" }) });
    await app.close();
    expect((await stores.events.getSnapshot("renamed"))?.seq).toBe(5);
    const next = createApp(defineConfig({ stores, effects, logics: [v3] }));
    const actor = await next.resume("renamed");
    expect(actor.getSnapshot().value).toBe("closing");
    await actor.sendAsync({ type: "CLOSE" });
    expect(await next.result("renamed")).toEqual({ trail: ["r", "done:prepare"] });
    await next.close();
  });

  it("keeps the new version readable and the state sealed for a subject's sealed execution", async () => {
    const stores = memoryStores();
    await parked(stores, "sealed", { subject: "user-3", crypto: true });
    const { effects } = countedEffects();
    const config = { stores, effects, logics: [v1, v2], security: { crypto: { keys: stores.keys } } };
    const app = createApp(defineConfig(config));
    await migrate(app, "sealed", v2);
    await app.close();
    const raw = (await stores.events.read("sealed")).at(-1)!;
    expect(raw).toMatchObject({ type: EXECUTION_MIGRATED, version: "2" });
    expect(raw).not.toHaveProperty("state");
    const next = createApp(defineConfig({ ...config, logics: [v2] }));
    expect((await next.resume("sealed")).getSnapshot().value).toBe("waiting");
    await next.close();
  });

  it("refuses an execution running in this app, an ended one, one with a step in flight and another logic's target", async () => {
    const stores = memoryStores();
    await parked(stores, "live");
    const { effects } = countedEffects();
    const app = createApp(defineConfig({ stores, effects, logics: [v1, v2] }));
    await app.resume("live");
    await expect(migrate(app, "live", v2)).rejects.toMatchObject({
      code: RUNTIME_ERROR_CODES.migrationRefused,
      executionId: "live",
    });
    await app.close();

    const hanging = { work: { kind: "tool" as const, run: () => new Promise<never>(() => undefined) } };
    const stuck = createApp(defineConfig({ stores, effects: hanging }));
    await stuck.start(v1, { executionId: "in-flight", input: { name: "s" } });
    await stuck.close();

    const ended = createApp(defineConfig({ stores, effects }));
    const done = await ended.start(v1, { executionId: "ended", input: { name: "e" } });
    await done.settled();
    await done.sendAsync({ type: "CONTINUE" });
    await done.settled();
    await done.sendAsync({ type: "CLOSE" });
    await ended.result("ended");
    await ended.close();

    const fresh = createApp(defineConfig({ stores, effects, logics: [v1, v2] }));
    const refusal = (id: string, to = v2) => migrate(fresh, id, to).catch((e: unknown) => e);
    expect(await refusal("in-flight")).toMatchObject({ reason: expect.stringContaining("flow#prepare:1") });
    expect(await refusal("ended")).toMatchObject({ reason: expect.stringContaining("ended") });
    const other = flow({ version: "2" });
    Object.defineProperty(other, "id", { value: "other" });
    expect(await refusal("live", other)).toBeInstanceOf(MigrationRefusedError);
    // Nothing was journaled by a refusal.
    expect((await fresh.log("live")).some((r) => r.type === EXECUTION_MIGRATED)).toBe(false);
    await fresh.close();
  });
});
