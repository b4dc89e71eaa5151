// execution.checkDeterminism (ADR 0012 D8): each TRANSITION carries a digest of the context; a replay whose context
// differs at that seq fails with NonDeterminismError instead of diverging silently. Off by default.
import { afterEach, describe, expect, it } from "vitest";
import { assign, setup } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { NonDeterminismError } from "../actors/errors.js";
import { memoryStores } from "../stores/memory.js";
import { TRANSITION } from "../stores/schema.js";

const random = Math.random;
afterEach(() => {
  Math.random = random;
});

// A machine that draws an id in assign, as the friends-list example does.
const drawer = setup({}).createMachine({
  id: "drawer",
  context: { ids: [] as string[] },
  on: { ADD: { actions: assign({ ids: ({ context }) => [...context.ids, Math.random().toString(36).slice(2, 7)] }) } },
});

async function run(checkDeterminism: boolean | undefined) {
  const stores = memoryStores();
  const execution = { snapshotEvery: false as const, ...(checkDeterminism === undefined ? {} : { checkDeterminism }) };
  const app = createApp(defineConfig({ effects: {}, stores, execution }));
  const actor = await app.start(drawer, { executionId: "d" });
  await actor.sendAsync({ type: "ADD" });
  await actor.sendAsync({ type: "ADD" });
  const log = await app.log("d");
  await app.close();
  return { stores, log };
}

describe("execution.checkDeterminism", () => {
  it("off by default: no digest is journaled and a divergent replay goes on silently", async () => {
    const { stores, log } = await run(undefined);
    expect(log.filter((r) => r.type === TRANSITION).some((r) => "contextDigest" in r)).toBe(false);
    Math.random = () => 0.5;
    const app = createApp(defineConfig({ effects: {}, stores, logics: [drawer] }));
    await expect(app.resume("d")).resolves.toBeDefined();
    await app.close();
  });

  it("on: a replay that derives another context fails with NonDeterminismError at that seq, even in an app with it off", async () => {
    const { stores, log } = await run(true);
    const digests = log.filter((r) => r.type === TRANSITION).map((r) => r.contextDigest);
    expect(digests.every((d) => typeof d === "string")).toBe(true);
    Math.random = () => 0.5;
    const app = createApp(defineConfig({ effects: {}, stores, logics: [drawer] }));
    const failed = await app.resume("d").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(NonDeterminismError);
    expect((failed as NonDeterminismError).message).toContain("seq");
    await app.close();
  });

  it("on: a deterministic machine replays as before", async () => {
    Math.random = () => 0.25;
    const { stores } = await run(true);
    const app = createApp(defineConfig({ effects: {}, stores, logics: [drawer] }));
    const actor = await app.resume("d");
    expect(actor.getSnapshot().context.ids).toHaveLength(2);
    await app.close();
  });
});
