// Bad configuration and bad start options: typed errors at createApp / start that name the key and the fix.
import { describe, expect, it } from "vitest";
import { setup } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig, type LoomConfig } from "../actors/config.js";
import { ConfigError, DuplicateExecutionError, UnknownEffectError, UnknownExecutionError } from "../actors/errors.js";
import { effectActor } from "../machines/helpers/effectActor.js";
import { memoryStores } from "../stores/memory.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";

const base = (): LoomConfig => ({ stores: memoryStores(), effects: countedDemoEffects().effects });

describe("configuration is refused at boot", () => {
  it("refuses an unknown top-level key, naming it and the known ones", () => {
    expect(() => createApp({ ...base(), snapshotsEvery: 3 } as never)).toThrow(ConfigError);
    expect(() => createApp({ ...base(), snapshotsEvery: 3 } as never)).toThrow(
      /"snapshotsEvery".*unknown option.*Known options: stores, effects/,
    );
  });

  it("refuses a flat spelling of a grouped option with a TypeError naming the grouped path", () => {
    const flat = () => createApp({ ...base(), claimCheck: {} } as never);
    expect(flat).toThrow(TypeError);
    expect(flat).toThrow(/write it as execution: \{ claimCheck: \.\.\. \}/);
    expect(() => createApp({ ...base(), redact: [] } as never)).toThrow(/security: \{ redact/);
    expect(() => createApp({ ...base(), onWarn: () => {} } as never)).toThrow(/observability: \{ onWarn/);
  });

  it("refuses unknown keys inside a group", () => {
    expect(() => createApp({ ...base(), execution: { snapshotEvry: 3 } } as never)).toThrow(
      /"execution.snapshotEvry": unknown option/,
    );
  });

  it("refuses missing stores, bad effects and bad values", () => {
    expect(() => createApp({ effects: {} } as never)).toThrow(/"stores": required/);
    expect(() => createApp({ ...base(), effects: { x: () => 1 } } as never)).toThrow(/"effects.x": not an effect/);
    expect(() => createApp(defineConfig({ ...base(), execution: { snapshotEvery: 0 } }))).toThrow(/snapshotEvery/);
    expect(() => createApp(defineConfig({ ...base(), security: { redact: [42 as never] } }))).toThrow(
      /security.redact/,
    );
  });
});

describe("start and resume refuse bad input", () => {
  it("refuses a machine that names an effect the config lacks", async () => {
    const app = createApp(base());
    const machine = setup({ actors: { translate: effectActor() } }).createMachine({
      id: "m",
      invoke: { src: "translate" },
    });
    const error = await app.start(machine, { executionId: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownEffectError);
    expect((error as Error).message).toMatch(
      /invokes "translate".*registered: research, write.*effects: \{ "translate"/,
    );
    expect(await app.stores.events.head("x")).toBe(0);
  });

  it("refuses a duplicate executionId", async () => {
    const app = createApp(base());
    await app.start(demoMachine, { executionId: "dup", input: { topic: "t" } });
    const error = await app.start(demoMachine, { executionId: "dup", input: { topic: "t" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateExecutionError);
    expect((error as Error).message).toMatch(/app.resume\("dup"\)/);
    const other = createApp({ ...base(), stores: app.stores });
    await expect(other.start(demoMachine, { executionId: "dup", input: { topic: "t" } })).rejects.toBeInstanceOf(
      DuplicateExecutionError,
    );
  });

  it("refuses a missing executionId and an unknown one", async () => {
    const app = createApp(base());
    await expect(app.start(demoMachine, {} as never)).rejects.toThrow(/start.executionId/);
    await expect(app.resume("ghost")).rejects.toBeInstanceOf(UnknownExecutionError);
    await expect(app.result("ghost")).rejects.toBeInstanceOf(UnknownExecutionError);
  });

  it("asks for the logic when a fresh app cannot know it", async () => {
    const stores = memoryStores();
    const app1 = createApp({ ...base(), stores });
    await app1.start(demoMachine, { executionId: "r", input: { topic: "t" } });
    const app2 = createApp({ ...base(), stores });
    await expect(app2.resume("r")).rejects.toThrow(/logic "demo".*app.resume\(id, logic\).*logics/);
  });
});
