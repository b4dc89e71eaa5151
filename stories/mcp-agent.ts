// Story: mcp-agent. The research agent with its search tools from a real MCP server process (the official
// SDK's server, stories/support/almanacServer.ts, over stdio), journaled to the filesystem, in a child
// process that is killed with SIGKILL mid-run; a second process resumes the execution. It lists nothing
// (the tool list the first process read is pinned), calls the server only for what the journal lacks, and
// the answer's footer names the taint the MCP results carried. Offline, no keys.
//
//   npx tsx stories/mcp-agent.ts [--dir <journal dir>]     (default ./.tmp/mcp-agent, emptied first if the
//   story made it; a given --dir is written to, never emptied)
//
// The same file is the child: `--child <dir> start|resume <executionId>`.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  scriptedModel,
  STEP_COMPLETED,
  TRANSITION,
  type Effect,
  type ModelReply,
  type StoredRecord,
} from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { mcpTools, type McpToolList } from "../mcp.js";
import { latency, PAGES, RESEARCH_QUESTION } from "./support/researchAgent.js";
import { defaultStoryDir } from "./support/storyDir.js";
import { nextFreeId, runStoryChild } from "./support/childProcess.js";
import { colours, tell } from "./support/terminal.js";

/** The first process is killed once this many turns are journaled, with the next turn's model call in flight. */
const KILL_AFTER_TURN = 2;
const thisFile = fileURLToPath(import.meta.url);
const root = resolve(dirname(thisFile), "..");
const SERVER = join(root, "stories/support/almanacServer.ts");
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

const [KONISHI, DISC, EARS] = PAGES;

/** One reply per turn; the tools are the MCP server's (`almanac_*`) and one of the app's own. */
const SCRIPT: ModelReply[] = [
  {
    text: "Searching the almanac.",
    toolCalls: [{ toolName: "almanac_search", input: { query: "barn owls hunting prey in total darkness" } }],
    usage: { inputTokens: 230, outputTokens: 30 },
  },
  {
    text: "Reading the two primary sources.",
    toolCalls: [
      { toolName: "almanac_fetchPage", input: { url: KONISHI!.url } },
      { toolName: "almanac_fetchPage", input: { url: DISC!.url } },
    ],
    usage: { inputTokens: 520, outputTokens: 44 },
  },
  {
    text: "Noting, then checking how elevation is resolved.",
    toolCalls: [
      {
        toolName: "takeNotes",
        input: {
          notes: ["Owls strike within 1 degree in darkness, by ear [1].", "The facial disc funnels sound [2]."],
        },
      },
      { toolName: "almanac_search", input: { query: "asymmetric ears vertical sound localisation" } },
    ],
    usage: { inputTokens: 1_380, outputTokens: 60 },
  },
  {
    text: "Reading the page on ear asymmetry.",
    toolCalls: [{ toolName: "almanac_fetchPage", input: { url: EARS!.url } }],
    usage: { inputTokens: 1_640, outputTokens: 27 },
  },
  {
    text:
      "Barn owls hunt by ear. In a light-tight room they strike mice within about one degree, guided by hearing " +
      "alone [1]. Their facial disc collects sound like a parabolic dish [2], and their asymmetric ears give " +
      `elevation from the level difference and azimuth from the time difference [3].\n\n[1] ${KONISHI!.url}\n` +
      `[2] ${DISC!.url}\n[3] ${EARS!.url}`,
    usage: { inputTokens: 2_100, outputTokens: 110 },
  },
];

const agent = agentLoop$({
  id: "almanac-researcher",
  model: "model",
  system: "You are a careful research assistant: search, read, keep notes, answer citing [n].",
  tools: ["almanac_search", "almanac_fetchPage", "takeNotes"],
  maxTurns: 8,
});

// ---------------------------------------------------------------------------------------------- the child

async function child(dir: string, mode: string, executionId: string): Promise<void> {
  const listFile = join(dir, `${executionId}.almanac-tools.json`);
  // The first process lists the server's tools and keeps the list; the second is handed it and lists nothing.
  const pinned = mode === "resume" ? (JSON.parse(await readFile(listFile, "utf8")) as McpToolList) : undefined;
  const almanac = await mcpTools(
    {
      name: "almanac",
      command: process.execPath,
      args: ["--import", "tsx", SERVER],
      cwd: root,
      env: { ALMANAC_LOG: join(dir, `${executionId}.almanac-requests.jsonl`) },
    },
    pinned ? { tools: pinned } : {},
  );
  if (!pinned) await writeFile(listFile, JSON.stringify(almanac.list));
  const llm = createLlmEffect(scriptedModel(SCRIPT));
  const model: Effect = {
    ...llm,
    run: async (request, ctx) => {
      const turn = Number(/#turn:(\d+):model$/.exec(ctx.stepId)?.[1] ?? 0);
      // Process 1 is killed during this call: it never answers there.
      if (mode === "start" && turn >= KILL_AFTER_TURN) await new Promise<never>(() => undefined);
      await latency(80, ctx.signal);
      return llm.run(request, ctx);
    },
  };
  const takeNotes = createToolEffect(async ({ notes }: { notes: string[] }) => ({ saved: notes.length }));
  const stores = await fsStores({ dir });
  const app = createApp(defineConfig({ stores, effects: { model, takeNotes, ...almanac.effects }, logics: [agent] }));
  let turns = 0;
  app.on("append", ({ records }) => {
    for (const r of records) {
      if (r.type === STEP_COMPLETED) tell({ kind: "step", stepId: r.stepId, effectId: r.effectId, seq: r.seq });
      if (isTurnEnd(r)) tell({ kind: "turn", turn: ++turns, seq: r.seq });
    }
  });
  tell({ kind: "hello", pid: process.pid, listed: !pinned, tools: almanac.names });
  if (mode === "start") {
    await app.start(agent, { executionId, input: { prompt: RESEARCH_QUESTION } });
    await app.result(executionId); // not reached: the parent kills this process first
    return;
  }
  const before = (await stores.events.read(executionId)).filter(isTurnEnd).length;
  turns = before;
  const actor = await app.resume(executionId);
  tell({ kind: "resumed", replay: actor.replay });
  const output = await app.result(executionId);
  const usage = await app.usage(executionId);
  tell({ kind: "done", output, usage });
  await app.close();
  await stores.close();
  await almanac.close();
}

// A turn ends when the loop leaves "acting".
const isTurnEnd = (r: StoredRecord) => r.type === TRANSITION && r.from === "acting" && r.to !== "acting";

// --------------------------------------------------------------------------------------------- the parent

type Message = Record<string, any> & { kind: string };
interface Request {
  pid: number;
  method: string;
  tool?: string;
  arguments?: unknown;
}

function runChild(dir: string, mode: string, executionId: string, onMessage: (m: Message, pid: number) => void) {
  return runStoryChild<Message>(thisFile, ["--child", dir, mode, executionId], { cwd: root, onMessage });
}

function nextId(dir: string): Promise<string> {
  return nextFreeId(dir, "mcp-research-");
}

async function requestsOf(file: string): Promise<Request[]> {
  if (!existsSync(file)) return [];
  const text = await readFile(file, "utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Request);
}

async function parent(): Promise<void> {
  const c = colours();
  const given = option("--dir") ?? process.env.LOOMWORK_DIR;
  const dir = given ? resolve(given) : await defaultStoryDir(".tmp/mcp-agent", "mcp-agent");
  const shown = relative(process.cwd(), dir) || ".";
  const executionId = await nextId(dir);
  const requestsFile = join(dir, `${executionId}.almanac-requests.jsonl`);
  const out = (text = "") => process.stdout.write(`${text}\n`);
  const head = (text: string) => out(`\n${c.bold(c.cyan("▸"))} ${c.bold(text)}`);
  const row = (label: string, text: string) => out(`    ${c.dim(label.padEnd(10))} ${text}`);
  const stepLine = (m: Message) => {
    const [, turn, what] = /#turn:(\d+):(model|tool:\d+)/.exec(String(m.stepId)) ?? [];
    const prefix = what === "model" ? `turn ${Number(turn) + 1}` : "";
    out(`    ${c.dim(prefix.padEnd(7))} ${String(m.effectId).padEnd(18)} ${c.dim(`seq ${m.seq}`)}`);
  };
  const counts = (requests: Request[]) => {
    const n = (method: string) => requests.filter((r) => r.method === method).length;
    const calls = requests.filter((r) => r.method === "tools/call").map((r) => r.tool);
    return `initialize ${n("initialize")} · tools/list ${n("tools/list")} · tools/call ${calls.length}${calls.length ? ` (${calls.join(", ")})` : ""}`;
  };

  out(`${c.bold("loomwork")} ${c.dim("·")} mcp-agent`);
  out(c.dim(`The research agent with its search tools from an MCP server process (stdio), journaled to ${shown}/.`));
  out(c.dim(`Question: ${RESEARCH_QUESTION}`));

  // Process 1: lists the server's tools, runs until KILL_AFTER_TURN turns are journaled, then dies by SIGKILL.
  let killedAt = 0;
  let journaledTurns = 0;
  const first = runChild(dir, "start", executionId, (m, pid) => {
    if (m.kind === "hello") {
      head(`process 1 ${c.dim(`(pid ${pid})`)} starts execution ${c.bold(executionId)}`);
      row("tools", `${m.tools.join(", ")}, takeNotes ${c.dim("(listed from the server, kept for the resume)")}`);
    }
    if (m.kind === "step") stepLine(m);
    if (m.kind === "turn") {
      journaledTurns = m.turn;
      if (m.turn >= KILL_AFTER_TURN && !killedAt) {
        killedAt = m.seq;
        first.proc.kill("SIGKILL");
      }
    }
  });
  const died = await first.exited;
  if (died.signal !== "SIGKILL") throw new Error(`process 1 ended without being killed (exit code ${died.code}).`);
  out(
    `    ${c.red("✗ SIGKILL")} right after turn ${journaledTurns} was journaled (seq ${killedAt}), turn ${journaledTurns + 1}'s model call in flight`,
  );
  const firstPids = new Set((await requestsOf(requestsFile)).map((r) => r.pid));
  const byFirst = (await requestsOf(requestsFile)).filter((r) => firstPids.has(r.pid));
  row("server", `its MCP server process was asked: ${counts(byFirst)}`);

  // Process 2: a fresh process resumes with the pinned tool list; its own server process is started on first call.
  let done: Message | undefined;
  const second = runChild(dir, "resume", executionId, (m, pid) => {
    if (m.kind === "hello")
      head(`process 2 ${c.dim(`(pid ${pid})`)} resumes ${c.bold(executionId)} with the tool list process 1 kept`);
    if (m.kind === "resumed")
      row(
        "replayed",
        `${m.replay.recordsReplayed} records; ${c.green(`${m.replay.stepsServedFromLog} steps served from the log`)} ${c.dim("(no MCP call for them)")}`,
      );
    if (m.kind === "step") stepLine(m);
    if (m.kind === "done") done = m;
  });
  const ended = await second.exited;
  if (ended.code !== 0 || !done) throw new Error(`process 2 failed (exit code ${ended.code}).`);
  const all = await requestsOf(requestsFile);
  const bySecond = all.filter((r) => !firstPids.has(r.pid));
  row("server", `its MCP server process was asked: ${counts(bySecond)}`);
  const calls = all.filter((r) => r.method === "tools/call").map((r) => `${r.tool} ${JSON.stringify(r.arguments)}`);
  const repeated = calls.length - new Set(calls).size;
  row("repeated", repeated === 0 ? c.green("0 MCP calls made twice ✓") : c.red(`${repeated} MCP calls made twice`));

  head("answer");
  for (const line of String(done.output.text).split("\n")) out(`    ${line}`);
  out(
    c.dim(
      `    ${done.output.turns} turns · tainted input seen from: ${done.output.sawTaintFrom.join(", ") || "nothing"} · ${done.usage.totalTokens} tokens`,
    ),
  );
  out();
  out(c.dim("Look inside the journal:"));
  out(`    npx tsx cli/main.ts log ${executionId} --dir ${shown}`);
  if (repeated > 0 || bySecond.some((r) => r.method === "tools/list")) process.exitCode = 1;
}

if (args.includes("--child"))
  await child(option("--child")!, args[args.indexOf("--child") + 2]!, args[args.indexOf("--child") + 3]!);
else await parent();
