// Story: a machine with two effects, abandoned mid-run as if its process died, resumed by a fresh app.
// Prints what was replayed from the journal and what actually ran. Offline, no keys.
import { assign, setup } from "xstate";
import { createApp, createToolEffect, defineConfig, effectActor, memoryStores, type Effect } from "../index.js";

const researcher = setup({
  types: {} as { context: { topic: string; notes: string[] }; input: { topic: string }; output: string[] },
  actors: { search: effectActor<{ q: string }, string>(), summarize: effectActor<{ notes: string[] }, string>() },
}).createMachine({
  id: "researcher",
  context: ({ input }) => ({ topic: input.topic, notes: [] }),
  initial: "searching",
  states: {
    searching: {
      invoke: {
        src: "search",
        id: "search",
        input: ({ context }) => ({ q: context.topic }),
        onDone: [
          {
            guard: ({ context }) => context.notes.length < 2,
            target: "searching",
            reenter: true,
            actions: assign({ notes: ({ context, event }) => [...context.notes, event.output] }),
          },
          {
            target: "summarizing",
            actions: assign({ notes: ({ context, event }) => [...context.notes, event.output] }),
          },
        ],
      },
    },
    summarizing: {
      invoke: {
        src: "summarize",
        id: "summarize",
        input: ({ context }) => ({ notes: context.notes }),
        onDone: {
          target: "done",
          actions: assign({ notes: ({ context, event }) => [...context.notes, event.output] }),
        },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => context.notes,
});

const ran: string[] = [];
let dieAfter = Infinity;
let onDeath: () => void = () => {};
const effects: Record<string, Effect> = {
  search: createToolEffect(async ({ q }: { q: string }, ctx) => {
    ran.push(ctx.stepId);
    if (ran.length > dieAfter) {
      onDeath();
      return new Promise<never>(() => {}); // the process "dies" while this call is in flight
    }
    return `a finding about ${q} (${ctx.stepId.split("#")[1]})`;
  }),
  summarize: createToolEffect(async ({ notes }: { notes: string[] }, ctx) => {
    ran.push(ctx.stepId);
    return `summary of ${notes.length} notes`;
  }),
};

const stores = memoryStores();
const line = (text = "") => console.log(text);

line("loomwork story: resume-demo (a machine with two effects, memory journal)");
const first = createApp(defineConfig({ stores, effects }));
dieAfter = 2;
const died = new Promise<void>((resolve) => (onDeath = resolve));
await first.start(researcher, { executionId: "run-1", input: { topic: "barn owls" } });
await died;
await first.close();
const before = await stores.events.read("run-1");
line(`first app: ran ${ran.length} effects (${ran.join(", ")}), then died with one call in flight`);
line(`journal:   ${before.length} records survived; last: ${before.at(-1)?.type}`);

ran.length = 0;
dieAfter = Infinity;
const second = createApp(defineConfig({ stores, effects, logics: [researcher] }));
const t0 = performance.now();
const actor = await second.resume("run-1");
const resumeMs = performance.now() - t0;
const output = await second.result("run-1");
const stats = await second.stats("run-1");
const snapshot = await stores.events.getSnapshot("run-1");
line(
  `fresh app: replayed ${actor.replay.recordsReplayed} records, served ${actor.replay.stepsServedFromLog} steps from the log, ran ${ran.length} (${ran.join(", ")})`,
);
line(`output:    ${JSON.stringify(output)}`);
line(
  `sizes:     log ${stats.records} records, ${stats.logBytes} bytes; folded state ${stats.stateBytes} bytes; snapshot ${snapshot ? `at seq ${snapshot.seq}` : "none yet (every 64 records)"}`,
);
line(`resume:    ${resumeMs.toFixed(2)} ms to rebuild the actor from the journal`);
await second.close();
