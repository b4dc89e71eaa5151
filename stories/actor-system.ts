// Story: an actor system, journaled. A plain XState machine (not an agent) invokes two picker machines in parallel and
// a packer after them, each a child execution with its own journal; the pickers and the dispatcher talk (sendParent,
// sendTo), and a callback actor answers the dispatcher's pings. Run in a second process on the filesystem journal,
// SIGKILLed at several points (a picker's call in flight; between the pickers; the packer's call in flight), and
// resumed each time by a third process: it prints the tree, what the resume served from the logs and what it ran.
// Offline, no keys.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assign, fromCallback, sendParent, sendTo, setup } from "xstate";
import { createApp, createToolEffect, defineConfig, effectActor, EVENT_RECEIVED } from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { runToEnd, runUntilKilled } from "./support/childProcess.js";

const picker = setup({
  types: {} as { context: { item: string }; input: { item: string }; output: { item: string } },
  actors: { pick: effectActor<{ item: string }, string>() },
}).createMachine({
  id: "picker",
  context: ({ input }) => ({ item: input.item }),
  initial: "picking",
  states: {
    picking: {
      invoke: {
        id: "pick",
        src: "pick",
        input: ({ context }) => ({ item: context.item }),
        onDone: { target: "told", actions: sendParent(({ context }) => ({ type: "PICKED", item: context.item })) },
      },
    },
    told: { on: { ACK: "done" } },
    done: { type: "final" },
  },
  output: ({ context }) => ({ item: context.item }),
});

const packer = setup({
  types: {} as { input: { items: string[] }; context: { items: string[]; label?: string } },
  actors: { pack: effectActor<{ items: string[] }, string>() },
}).createMachine({
  id: "packer",
  context: ({ input }) => ({ items: input.items }),
  initial: "packing",
  states: {
    packing: {
      invoke: {
        id: "pack",
        src: "pack",
        input: ({ context }) => ({ items: context.items }),
        onDone: { target: "done", actions: assign({ label: ({ event }) => event.output }) },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.label,
});

export const dispatcher = setup({
  types: {} as { context: { picked: string[]; pongs: number; done: number; label?: unknown } },
  actions: { joined: assign({ done: ({ context }) => context.done + 1 }) },
  actors: {
    picker,
    packer,
    // A callback actor: it answers each PING with a PONG (what it sends back is journaled in the dispatcher's log).
    bell: fromCallback(({ sendBack, receive }) => {
      receive((event) => {
        if (event.type === "PING") sendBack({ type: "PONG" });
      });
    }),
  },
}).createMachine({
  id: "dispatcher",
  context: { picked: [], pongs: 0, done: 0 },
  invoke: { id: "bell", src: "bell" },
  on: { PONG: { actions: assign({ pongs: ({ context }) => context.pongs + 1 }) } },
  initial: "picking",
  states: {
    picking: {
      invoke: [
        { id: "a", src: "picker", input: { item: "owl" }, onDone: { actions: "joined" } },
        { id: "b", src: "picker", input: { item: "lark" }, onDone: { actions: "joined" } },
      ],
      on: {
        PICKED: {
          actions: [
            assign({ picked: ({ context, event }) => [...context.picked, event.item as string].sort() }),
            sendTo(({ event }) => (event.item === "owl" ? "a" : "b"), { type: "ACK" }),
            sendTo("bell", { type: "PING" }),
          ],
        },
      },
      always: { guard: ({ context }) => context.done === 2, target: "packing" },
    },
    packing: {
      invoke: {
        id: "box",
        src: "packer",
        input: ({ context }) => ({ items: context.picked }),
        onDone: { target: "shipped", actions: assign({ label: ({ event }) => event.output }) },
      },
    },
    shipped: { type: "final" },
  },
  output: ({ context }) => ({ picked: context.picked, label: context.label }),
});

// The effects: each prints the call it starts, then takes its time (the lark is slow to pick: 400 ms).
function effects(print: (line: string) => void) {
  const call = async <T>(ctx: { executionId: string; stepId: string }, value: T, ms: number): Promise<T> => {
    print(`call ${ctx.executionId} ${ctx.stepId}`);
    await new Promise((resolve) => setTimeout(resolve, ms));
    return value;
  };
  return {
    pick: createToolEffect(async ({ item }: { item: string }, ctx) =>
      call(ctx, `picked ${item}`, item === "lark" ? 400 : 20),
    ),
    pack: createToolEffect(async ({ items }: { items: string[] }, ctx) => call(ctx, `box of ${items.join("+")}`, 40)),
  };
}

/** Where the story kills the running process: on the first line of its output that matches. */
const KILL_POINTS = [
  { what: "both pickers' calls in flight", at: /^call order-1\/b / },
  {
    what: "the owl picked and told (PICKED journaled by the dispatcher), the lark's call in flight",
    at: /^journaled order-1 PICKED/,
  },
  { what: "both picked, the packer's call in flight", at: /^call order-1\/box / },
];

const mode = process.argv[2];
const dir = process.argv[3];

if (mode === "--run" && dir) {
  // The process that gets killed: starts the tree and runs until it ends (or the story's SIGKILL).
  const stores = await fsStores({ dir });
  const app = createApp(defineConfig({ stores, effects: effects((l) => console.log(l)) }));
  // Each durable event, as the story watches for its kill point.
  app.on("append", ({ executionId, records }) => {
    for (const r of records) if (r.type === EVENT_RECEIVED) console.log(`journaled ${executionId} ${r.event.type}`);
  });
  await app.start(dispatcher, { executionId: "order-1" });
  const output = await app.result("order-1");
  console.log(`ended ${JSON.stringify(output)}`);
  await app.close();
  await stores.close();
} else if (mode === "--resume" && dir) {
  // The process after the crash: resumes every unfinished execution of the tree, reports what it served and ran.
  const stores = await fsStores({ dir });
  const ran: string[] = [];
  const app = createApp(defineConfig({ stores, effects: effects((l) => ran.push(l.slice(5))), logics: [dispatcher] }));
  const report = await app.resumeUnfinished();
  const output = await app.result("order-1");
  await until(async () => (await stores.events.listExecutions()).every((e) => e.status !== "running"));
  const tree = (await stores.events.listExecutions()).map((e) => e.executionId).sort();
  const received = async (id: string, type: string) =>
    (await app.log(id)).filter((r) => r.type === EVENT_RECEIVED && r.event.type === type).length;
  const served = report.resumed.reduce((sum, actor) => sum + actor.replay.stepsServedFromLog, 0);
  console.log(`resumed ${report.resumed.length} executions, served ${served} recorded step(s) from their logs`);
  console.log(`ran     ${ran.length ? ran.join(", ") : "nothing"}`);
  console.log(`tree    ${tree.join(", ")}`);
  console.log(
    `messages PICKED x${await received("order-1", "PICKED")} in order-1, ACK x${await received("order-1/a", "ACK")} in order-1/a, ACK x${await received("order-1/b", "ACK")} in order-1/b, PONG x${await received("order-1", "PONG")} in order-1`,
  );
  console.log(`output  ${JSON.stringify(output)}`);
  await app.close();
  await stores.close();
} else {
  const here = fileURLToPath(import.meta.url);
  const line = (text = "") => console.log(text);
  line("loomwork story: actor-system (a dispatcher, two pickers, a packer and a callback actor; fs journal)");
  line(
    "each run: a second process runs the tree and is SIGKILLed; a third resumes it. Messages between executions are",
  );
  line(
    "exactly once; what the dispatcher sends its callback actor is live (a PING lost in the crash is not sent again).",
  );
  for (const point of KILL_POINTS) {
    const journal = await mkdtemp(join(tmpdir(), "loomwork-actor-system-"));
    try {
      const calls = await runUntilKilled(here, journal, point.at);
      line();
      line(`SIGKILL with ${point.what}; calls started: ${calls.join(", ")}`);
      const resumed = await runToEnd(here, journal);
      for (const l of resumed) line(`  ${l}`);
    } finally {
      await rm(journal, { recursive: true, force: true });
    }
  }
}

async function until(predicate: () => Promise<boolean>): Promise<void> {
  while (!(await predicate())) await new Promise((resolve) => setTimeout(resolve, 5));
}
