// One registry per tree (issue 33, ADR 0012 D4): system.get(systemId) inside a child execution finds the actors its
// tree registered (its parent's live sources and children, its siblings, its ancestors) as on XState, where one
// system serves the whole tree; a systemId used twice in a tree is refused as XState refuses it.
import { describe, expect, it } from "vitest";
import {
  type AnyActorRef,
  type AnyStateMachine,
  assign,
  createActor,
  createMachine,
  fromCallback,
  sendTo,
  setup,
} from "xstate";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { EVENT_RECEIVED } from "../../stores/schema.js";
import { siblings } from "./systemMachines.js";

async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > 10_000) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function onXState(machine: AnyStateMachine): Promise<unknown> {
  const actor = createActor(machine).start();
  await until(() => actor.getSnapshot().status !== "active");
  return actor.getSnapshot().output;
}

describe("one registry per tree", () => {
  it("finds a sibling child execution by its systemId: messages between siblings, journaled and exactly once", async () => {
    expect(await onXState(siblings)).toBe(42);
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    await app.start(siblings, { executionId: "t" });
    expect(await app.result("t")).toBe(42);
    const asked = (await app.log("t/a")).filter((r) => r.type === EVENT_RECEIVED);
    expect(asked).toEqual([
      expect.objectContaining({ event: { type: "ASK" }, from: expect.objectContaining({ executionId: "t/c" }) }),
    ]);
    await app.close();
  });

  it("reaches the parent's callback actor from a child, by sendTo and by a custom action calling send (XState's register-invoked)", async () => {
    const heard: string[] = [];
    const parent = createMachine({
      id: "parent",
      initial: "a",
      states: {
        a: {
          invoke: [
            {
              src: fromCallback(({ receive }) => {
                receive((event) => heard.push(event.type));
              }),
              systemId: "receiver",
            },
            {
              src: createMachine({
                id: "childmachine",
                entry: [
                  ({ system }) => {
                    const receiver = system?.get("receiver") as AnyActorRef | undefined;
                    receiver?.send({ type: "HELLO" });
                  },
                  sendTo(({ system }) => system.get("receiver") as AnyActorRef, { type: "AGAIN" }),
                ],
              }),
            },
          ],
        },
      },
    });
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    await app.start(parent, { executionId: "r" });
    await until(() => heard.length === 2);
    expect(heard.sort()).toEqual(["AGAIN", "HELLO"]);
    await app.close();
  });

  it("keeps a child's view of the tree after a resume by a fresh app", async () => {
    const pinged: string[] = [];
    const child = setup({}).createMachine({
      id: "kid",
      on: { GO: { actions: sendTo(({ system }) => system.get("ear") as AnyActorRef, { type: "PING" }) } },
    });
    const parent = setup({
      actors: {
        kid: child,
        ear: fromCallback(({ receive }) => {
          receive((event) => pinged.push(event.type));
        }),
      },
    }).createMachine({
      id: "holder",
      invoke: [
        { id: "ear", src: "ear", systemId: "ear" },
        { id: "kid", src: "kid" },
      ],
      on: { GO: { actions: sendTo("kid", { type: "GO" }) } },
    });
    const stores = memoryStores();
    const first = createApp(defineConfig({ stores, effects: {} }));
    const actor = await first.start(parent, { executionId: "k" });
    await actor.sendAsync({ type: "GO" });
    await until(() => pinged.length === 1);
    await first.close();
    const again = createApp(defineConfig({ stores, effects: {}, logics: [child] }));
    const resumed = await again.resume("k", parent);
    await resumed.sendAsync({ type: "GO" });
    await until(() => pinged.length === 2);
    await again.close();
  });

  it("refuses a systemId used twice in a tree: the child's macrostep fails, naming the systemId, as on XState", async () => {
    const clash = setup({
      actors: { inner: fromCallback(() => undefined) },
    }).createMachine({
      id: "clash",
      invoke: { src: "inner", systemId: "dup" },
    });
    const holder = setup({
      actors: { clash, inner: fromCallback(() => undefined) },
      types: { context: {} as { error?: string } },
    }).createMachine({
      id: "holderOfDup",
      context: {},
      initial: "on",
      states: {
        on: {
          invoke: [
            { src: "inner", systemId: "dup" },
            {
              id: "clash",
              src: "clash",
              onError: {
                target: "failed",
                actions: assign({ error: ({ event }) => String((event.error as { message?: string }).message) }),
              },
            },
          ],
        },
        failed: { type: "final" },
      },
      output: ({ context }) => context.error,
    });
    expect(await onXState(holder)).toMatch(/dup/);
    const app = createApp(defineConfig({ stores: memoryStores(), effects: {} }));
    await app.start(holder, { executionId: "d" });
    const message = await app.result("d");
    expect(message).toMatch(/systemId "dup"/);
    expect(message).toMatch(/d\b/);
    const end = (await app.log("d/clash")).at(-1);
    expect(end).toMatchObject({ status: "error", error: { name: "DuplicateSystemIdError" } });
    await app.close();
  });
});
