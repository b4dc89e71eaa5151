// Story: research-agent, the default of `npm start`. A multi-turn agent (agentLoop$, three tools, the scripted
// offline model) journaled to the filesystem runs in a child process, which is killed with SIGKILL mid-run;
// a second process opens the same directory, resumes the execution and finishes it. Nothing recorded runs twice.
//
//   npx tsx stories/research-agent.ts [--dir <journal dir>]     (default ./.tmp/research-agent, emptied first if
//   the story made it, else a fresh temporary directory; a given --dir is written to, never emptied)
//
// The same file is the child: `--child <dir> start|resume <executionId>`.
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createApp,
  defineConfig,
  expandRecords,
  STEP_COMPLETED,
  STEP_FAILED,
  TRANSITION,
  type App,
  type StoredRecord,
} from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { describeStep, RESEARCH_QUESTION, researchAgent, researchEffects } from "./support/researchAgent.js";
import { defaultStoryDir } from "./support/storyDir.js";
import { nextFreeId, runStoryChild } from "./support/childProcess.js";
import { bytes, bytesOnDisk, colours, ms, tell } from "./support/terminal.js";

/** The first process is killed as soon as this many turns are journaled. */
const KILL_AFTER_TURN = 2;
const thisFile = fileURLToPath(import.meta.url);
const root = resolve(dirname(thisFile), "..");
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

type Message = Record<string, any> & { kind: string };

// ---------------------------------------------------------------------------------------------- the child

async function child(dir: string, mode: string, executionId: string): Promise<void> {
  const stores = await fsStores({ dir });
  const app = createApp(defineConfig({ stores, effects: researchEffects(), logics: [researchAgent] }));
  if (mode === "start") {
    report(app, 0);
    tell({ kind: "hello", pid: process.pid });
    await app.start(researchAgent, { executionId, input: { prompt: RESEARCH_QUESTION } });
    await app.result(executionId); // not reached in the story: the parent kills this process first
    tell({ kind: "finished" });
    return;
  }
  tell({ kind: "hello", pid: process.pid });
  // Read from the stores as they hold it, then in the read form app.log returns (a transition's `from` derived: stores/recordFormat.ts).
  const before = expandRecords([
    ...(await stores.events.readArchives(executionId)).flatMap((s) => s.records),
    ...(await stores.events.read(executionId)),
  ]);
  const outcomes = before.filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED);
  const recorded = new Set(outcomes.map((r) => r.stepId as string));
  const ran: { stepId: string; effectId: string }[] = [];
  app.on("step", ({ executionId: id, stepId, effectId }) => id === executionId && ran.push({ stepId, effectId }));
  report(app, before.filter(isTurnEnd).length);
  const t0 = performance.now();
  const actor = await app.resume(executionId);
  tell({
    kind: "resumed",
    ms: performance.now() - t0,
    replay: actor.replay,
    records: before.length,
    lastType: before.at(-1)?.type,
    servedModel: outcomes.filter((r) => r.effectId === "model").length,
    servedTools: outcomes.filter((r) => r.effectId !== "model").length,
  });
  const output = await app.result(executionId);
  const stats = await app.stats(executionId);
  const usage = await app.usage(executionId);
  tell({
    kind: "done",
    output,
    stats,
    usage,
    ran,
    reran: ran.filter((s) => recorded.has(s.stepId)).map((s) => s.stepId),
  });
  await app.close();
  await stores.close();
}

// A turn ends when the loop leaves "acting" (a tool result that leaves it there is one of several).
const isTurnEnd = (r: StoredRecord) => r.type === TRANSITION && r.from === "acting" && r.to !== "acting";

/** Tells the parent about every journaled step outcome and every journaled end of a turn. */
function report(app: App, turnsBefore: number): void {
  let turns = turnsBefore;
  app.on("append", ({ records }) => {
    for (const r of records) {
      if (r.type === STEP_COMPLETED)
        tell({
          kind: "step",
          stepId: r.stepId,
          effectId: r.effectId,
          seq: r.seq,
          summary: describeStep(r.effectId as string, r.output),
        });
      if (isTurnEnd(r)) tell({ kind: "turn", turn: ++turns, seq: r.seq });
    }
  });
}

// --------------------------------------------------------------------------------------------- the parent

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** Lines of at most `width` characters, breaking at spaces; blank lines kept. */
function wrap(text: string, width: number): string[] {
  return text.split("\n").flatMap((paragraph) => {
    const lines: string[] = [];
    let line = "";
    for (const word of paragraph.split(" ")) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    return [...lines, line];
  });
}

function runChild(dir: string, mode: string, executionId: string, onMessage: (m: Message, pid: number) => void) {
  return runStoryChild<Message>(thisFile, ["--child", dir, mode, executionId], { cwd: root, onMessage });
}

/** research-1 in a new directory, then research-2, ...: the ids the docs' CLI examples name. */
function nextResearchId(dir: string): Promise<string> {
  return nextFreeId(dir, "research-");
}

async function parent(): Promise<void> {
  const c = colours();
  const given = option("--dir") ?? process.env.LOOMWORK_DIR;
  // A given directory is written beside what it holds (nothing deleted); the default one is the story's own.
  const dir = given ? resolve(given) : await defaultStoryDir(".tmp/research-agent", "research-agent");
  const shown = relative(process.cwd(), dir) || ".";
  const executionId = await nextResearchId(dir);
  const out = (text = "") => process.stdout.write(`${text}\n`);
  const head = (text: string) => out(`\n${c.bold(c.cyan("▸"))} ${c.bold(text)}`);
  const row = (label: string, text: string) => out(`    ${c.dim(label.padEnd(10))} ${text}`);
  const stepLine = (m: Message) => {
    const [, turn, what] = /#turn:(\d+):(model|tool:\d+)/.exec(String(m.stepId)) ?? [];
    const prefix = what === "model" ? `turn ${Number(turn) + 1}` : "";
    out(
      `    ${c.dim(prefix.padEnd(7))} ${(m.effectId === "model" ? c.magenta : c.blue)(String(m.effectId).padEnd(10))} ${m.summary} ${c.dim(`seq ${m.seq}`)}`,
    );
  };

  out(`${c.bold("loomwork")} ${c.dim("·")} research-agent`);
  out(c.dim(`A research agent (agentLoop$, 3 tools, scripted offline model) journaled to ${shown}/ with fsStores.`));
  out(c.dim(`Question: ${RESEARCH_QUESTION}`));

  // Process 1: runs until KILL_AFTER_TURN turns are journaled, then dies by SIGKILL: no shutdown, no flush.
  let journaledTurns = 0;
  let killedAt = 0;
  const first = runChild(dir, "start", executionId, (m, pid) => {
    if (m.kind === "hello") head(`process 1 ${c.dim(`(pid ${pid})`)} starts execution ${c.bold(executionId)}`);
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
  if (died.signal !== "SIGKILL")
    throw new Error(
      `process 1 ended without being killed (exit code ${died.code}); the story expected to kill it mid-run.`,
    );
  out(
    `    ${c.red("✗ SIGKILL")} right after turn ${journaledTurns} was journaled (seq ${killedAt}): the run was in the middle of turn ${journaledTurns + 1}`,
  );

  // Process 2: a fresh process opens the same directory (the dead writer's lock is taken over) and resumes.
  let done: Message | undefined;
  const second = runChild(dir, "resume", executionId, (m, pid) => {
    if (m.kind === "hello")
      head(`process 2 ${c.dim(`(pid ${pid})`)} opens ${shown}/ and resumes ${c.bold(executionId)}`);
    if (m.kind === "resumed") {
      row("read", `${m.records} records survived the kill; the last one is ${m.lastType}`);
      row(
        "replayed",
        `${m.replay.recordsReplayed} records in ${ms(m.ms)}${m.replay.fromSnapshotSeq ? ` from the snapshot at seq ${m.replay.fromSnapshotSeq}` : ""}`,
      );
      row(
        "served",
        `${c.green(`${plural(m.replay.stepsServedFromLog, "step")} from the log`)}: ${plural(m.servedModel, "model call")}, ${plural(m.servedTools, "tool call")} ${c.dim("(not run again)")}`,
      );
      row(
        "in flight",
        `${plural(m.replay.stepsToRun, "step")} had no outcome in the log when process 1 died: ${m.replay.stepsToRun === 1 ? "it runs" : "they run"} now`,
      );
    }
    if (m.kind === "step") stepLine(m);
    if (m.kind === "done") done = m;
  });
  const ended = await second.exited;
  if (ended.code !== 0 || !done) throw new Error(`process 2 failed (exit code ${ended.code}).`);

  const ranModel = done.ran.filter((s: { effectId: string }) => s.effectId === "model").length;
  const reran = done.reran as string[];
  row("ran", `${plural(ranModel, "model call")}, ${plural(done.ran.length - ranModel, "tool call")} in this process`);
  row(
    "re-ran",
    reran.length === 0 ? c.green("0 recorded steps ✓") : c.red(`${reran.length} recorded steps: ${reran.join(", ")}`),
  );

  head("answer");
  for (const line of wrap(String(done.output.text), 100)) out(`    ${line}`);
  out(
    c.dim(
      `    ${done.output.turns} turns · tainted input seen from: ${done.output.sawTaintFrom.join(", ") || "nothing"} · ${done.usage.totalTokens} tokens`,
    ),
  );

  head("sizes");
  row("log", `${done.stats.records} records, ${bytes(done.stats.logBytes)} of JSON`);
  row("state", `${bytes(done.stats.stateBytes)} folded state at the head ${c.dim("(what a resume holds in memory)")}`);
  row("on disk", `${bytes(await bytesOnDisk(dir))} in ${shown}/ ${c.dim("(CRC-framed log, catalogue checkpoint)")}`);

  out();
  out(c.dim("Look inside the journal:"));
  out(`    npx tsx cli/main.ts log ${executionId} --dir ${shown}`);
  out(`    npx tsx cli/main.ts stats --dir ${shown}`);
  if (reran.length > 0) process.exitCode = 1;
}

if (args.includes("--child"))
  await child(option("--child")!, args[args.indexOf("--child") + 2]!, args[args.indexOf("--child") + 3]!);
else await parent();
