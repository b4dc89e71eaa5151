// Story: agents that delegate. An orchestrator sends three questions to researchers in parallel (agentTool: each a
// child execution with its own journal) and hands the conversation to a writer (a handoff), on the built-in offline
// model. A second process runs the tree on the filesystem journal and is SIGKILLed at several points (researchers
// mid-model-call and mid-tool; a researcher finished but not yet delivered; mid-handoff); a third resumes it and
// prints the tree, what it served from the logs, what it ran, the usage per agent, and whether the answer is the
// uninterrupted run's. Offline, no keys.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createApp, defineConfig, memoryStores, STEP_COMPLETED } from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { runToEnd, runUntilKilled } from "./support/childProcess.js";
import { multiAgentEffects, orchestrator } from "./support/multiAgent.js";

const PROMPT = "How do barn owls catch prey in complete darkness?";
const ROOT = "run-1";
const lead = orchestrator(3);

/** Where the story kills the running process: on the first line of its output that matches. */
const KILL_POINTS = [
  {
    what: "the researchers mid-call (researcher 1's second model call in flight)",
    at: /^call run-1\/tool:0:0 researcher#turn:1:model$/,
  },
  { what: "researcher 1 finished, its answer not yet delivered to the orchestrator", at: /^ended run-1\/tool:0:0$/ },
  { what: "mid-handoff: the writer's model call in flight", at: /^call run-1\/handoff writer#turn:0:model$/ },
];

const mode = process.argv[2];
const dir = process.argv[3];

if (mode === "--run" && dir) {
  // The process that gets killed: runs the tree until it ends (or the story's SIGKILL).
  const stores = await fsStores({ dir });
  const effects = multiAgentEffects({ onCall: (ctx) => console.log(`call ${ctx.executionId} ${ctx.stepId}`) });
  const app = createApp(defineConfig({ stores, effects }));
  app.on("ended", ({ executionId }) => console.log(`ended ${executionId}`));
  await app.start(lead, { executionId: ROOT, input: { prompt: PROMPT } });
  await app.result(ROOT);
  await app.close();
  await stores.close();
} else if (mode === "--resume" && dir) {
  // The process after the crash: resumes the tree, reports what it served and ran, and the answer.
  const stores = await fsStores({ dir });
  const recorded = await recordedSteps(stores.events);
  const ran: string[] = [];
  const effects = multiAgentEffects({ onCall: (ctx) => void ran.push(`${ctx.executionId} ${ctx.stepId}`) });
  const app = createApp(defineConfig({ stores, effects, logics: [lead] }));
  const report = await app.resumeUnfinished();
  const output = (await app.result(ROOT)) as { text: string; lastAgent?: string };
  const tree = await app.executions({ root: ROOT });
  const usage = await app.usage(ROOT);
  const served = report.resumed.reduce((sum, actor) => sum + actor.replay.stepsServedFromLog, 0);
  const again = ran.filter((call) => recorded.has(call));
  console.log(`resumed ${report.resumed.length} executions, served ${served} recorded step(s) from their logs`);
  console.log(`ran     ${ran.length ? ran.join(", ") : "nothing"}`);
  console.log(`re-ran  ${again.length ? again.join(", ") : "no recorded model or tool call"}`);
  console.log("tree");
  for (const info of tree) {
    const own = usage.byExecution?.[info.executionId];
    console.log(
      `  ${info.executionId.padEnd(16)} ${(info.logicId ?? "?").padEnd(12)} ${info.status.padEnd(5)} ` +
        `${plural(own?.modelCalls ?? 0, "model call")}, ${own?.totalTokens ?? 0} tokens`,
    );
  }
  console.log(`usage   ${usage.modelCalls} model calls, ${usage.totalTokens} tokens for the tree`);
  console.log(`answer  by ${output.lastAgent}: ${output.text.slice(0, 96)}...`);
  console.log(`same answer as the uninterrupted run: ${output.text === (await uninterrupted()).text ? "yes" : "NO"}`);
  await app.close();
  await stores.close();
} else {
  const here = fileURLToPath(import.meta.url);
  const line = (text = "") => console.log(text);
  line("loomwork story: multi-agent (an orchestrator, three researchers in parallel, a writer by handoff; fs journal)");
  line("each run: a second process runs the tree and is SIGKILLed; a third resumes it. Every agent is an execution");
  line("with its own journal: nothing recorded runs again, and the answer is the uninterrupted run's.");
  const reference = await uninterrupted();
  line();
  line(`uninterrupted (in memory): ${reference.turns} turns, answered by ${reference.lastAgent}`);
  for (const point of KILL_POINTS) {
    const journal = await mkdtemp(join(tmpdir(), "loomwork-multi-agent-"));
    try {
      const calls = await runUntilKilled(here, journal, point.at);
      line();
      line(`SIGKILL with ${point.what}; ${calls.length} calls had started`);
      for (const l of await runToEnd(here, journal)) line(`  ${l}`);
    } finally {
      await rm(journal, { recursive: true, force: true });
    }
  }
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

// The same tree run to its end in memory, without latency: the answer every resumed run must give.
async function uninterrupted(): Promise<{ text: string; turns: number; lastAgent?: string }> {
  const app = createApp(
    defineConfig({ stores: memoryStores(), effects: multiAgentEffects({ modelMs: 0, toolMs: 0 }) }),
  );
  await app.start(lead, { executionId: ROOT, input: { prompt: PROMPT } });
  const output = (await app.result(ROOT)) as { text: string; turns: number; lastAgent?: string };
  await app.close();
  return output;
}

// Every step with a recorded outcome before the resume, as "<execution> <step>".
async function recordedSteps(events: Awaited<ReturnType<typeof fsStores>>["events"]): Promise<Set<string>> {
  const recorded = new Set<string>();
  for (const info of await events.listExecutions())
    for (const record of await events.read(info.executionId))
      if (record.type === STEP_COMPLETED) recorded.add(`${info.executionId} ${String(record.stepId)}`);
  return recorded;
}
