// Story: the ADR 0140 claim-check opt-in on a bulk-export tool. The same agent runs twice, with and
// without execution.claimCheck; the story prints the folded state and log sizes of both, then resumes
// the claim-checked run in a fresh app and counts its content-store calls: zero.
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  memoryStores,
  scriptedModel,
  type ContentStore,
  type Stores,
} from "../index.js";

const TURNS = 40;
const tty = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = (text: string) => (tty ? `\x1b[1m${text}\x1b[22m` : text);
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** A month of orders per call: ~3 kB of rows the model only needs the count and total of. */
function exportOrders({ month }: { month: number }) {
  const rows = Array.from({ length: 30 }, (_, day) => ({
    id: `o-${month}-${day}`,
    day: day + 1,
    customer: `customer ${(month * 31 + day) % 97}`,
    total: ((month * 37 + day * 11) % 500) + 0.99,
  }));
  return { month, rows };
}

const model = () =>
  scriptedModel((_request, call) =>
    call < TURNS - 1
      ? { toolCalls: [{ toolName: "exportOrders", input: { month: call + 1 } }] }
      : { text: `Exported ${TURNS - 1} months of orders.` },
  );
const loop = agentLoop$({
  id: "exporter",
  model: "model",
  tools: ["exportOrders"],
  maxTurns: TURNS,
  warnTranscriptBytes: false,
});

/** Counts every call a resume makes to the content store. */
function counting(inner: ContentStore): ContentStore & { calls: number } {
  const counter = { calls: 0 };
  const count =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A) => (counter.calls++, fn(...args));
  return Object.assign(counter, {
    spiVersion: inner.spiVersion,
    sealsContent: inner.sealsContent,
    put: count(inner.put.bind(inner)),
    get: count(inner.get.bind(inner)),
    has: count(inner.has.bind(inner)),
    list: count(inner.list.bind(inner)),
  });
}

async function run(
  claimCheck: boolean,
): Promise<{ stores: Stores; stats: { records: number; logBytes: number; stateBytes: number } }> {
  const stores = memoryStores();
  const app = createApp(
    defineConfig({
      stores,
      effects: {
        model: createLlmEffect(model()),
        exportOrders: createToolEffect(async (input: { month: number }) => exportOrders(input)),
      },
      ...(claimCheck
        ? {
            execution: {
              claimCheck: {
                store: stores.content,
                toolIds: ["exportOrders"],
                digests: { exportOrders: (v: unknown) => ({ rows: (v as { rows: unknown[] }).rows.length }) },
              },
            },
          }
        : {}),
    }),
  );
  await app.start(loop, {
    executionId: "export-1",
    input: { prompt: "Export every month's orders and tell me when done." },
  });
  await app.result("export-1");
  return { stores, stats: await app.stats("export-1") };
}

console.log(bold("loomwork story: claim-check (ADR 0140) on a bulk-export tool"));
const off = await run(false);
const on = await run(true);
console.log(`  ${TURNS - 1} exports of ~3 kB each; the model only needs each export's row count.`);
console.log(`  claim-check off: folded state ${kb(off.stats.stateBytes)}, log ${kb(off.stats.logBytes)}`);
console.log(
  `  claim-check on:  folded state ${kb(on.stats.stateBytes)}, log ${kb(on.stats.logBytes)} (declared digest { rows })`,
);
console.log(`  ${(off.stats.stateBytes / on.stats.stateBytes).toFixed(1)}x less state to hold and resume`);

let blobs = 0;
for await (const _ of on.stores.content.list()) blobs++;
const content = counting(on.stores.content);
let reran = 0;
const fresh = createApp(
  defineConfig({
    stores: { ...on.stores, content },
    effects: {
      model: createLlmEffect(scriptedModel(() => (reran++, { text: "" }))),
      exportOrders: createToolEffect(async () => (reran++, {})),
    },
    execution: { claimCheck: { store: content, toolIds: ["exportOrders"] } },
    logics: [loop],
  }),
);
const actor = await fresh.resume("export-1");
console.log(
  `  resumed in a fresh app: ${actor.replay.recordsReplayed} records replayed, ${content.calls} content-store calls, ${reran} model or tool calls re-run`,
);
console.log(
  `  the ${blobs} offloaded exports stay in the content store, retained for audit (only erasure deletes them)`,
);
if (content.calls !== 0 || reran !== 0) process.exitCode = 1;
