// Story: desktop-embed. Agent actors embedded in a long-lived Node process, as in Electron's main process,
// journaled with fsStores in the app's data directory. The user quits the app mid-run (a graceful quit:
// app.close() and stores.close(), as in Electron's before-quit); the app starts again in a new process,
// finds the unfinished executions in the catalogue and resumes them, its UI following each actor.
//
//   npx tsx stories/desktop-embed.ts [--dir <data dir>]     (else $LOOMWORK_DIR, else ./.tmp/desktop-embed,
//   emptied first if the story made it, else a fresh temporary directory; a given one is never emptied)
//
// The same file is the app process: `--app <dir> <session number> [<id suffix>]`.
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createApp, defineConfig, STEP_COMPLETED, STEP_FAILED, TRANSITION, type JournaledActor } from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { desktopAssistant, desktopEffects } from "./support/desktopAssistant.js";
import { defaultStoryDir } from "./support/storyDir.js";
import { CHILD_TAG, colours, tell } from "./support/terminal.js";

const thisFile = fileURLToPath(import.meta.url);
const root = resolve(dirname(thisFile), "..");
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
// In a directory that already holds executions (a shared LOOMWORK_DIR) the ids get a suffix.
const suffix = args.includes("--app") ? (args[args.indexOf("--app") + 3] ?? "") : "";
const REQUESTS = [
  { executionId: `digest-inbox${suffix}`, prompt: "Digest my inbox folder." },
  { executionId: `digest-notes${suffix}`, prompt: "Digest my notes folder." },
];
const idWidth = Math.max(...REQUESTS.map((r) => r.executionId.length)) + 1;

// ------------------------------------------------------------------------------------ the app process

async function appProcess(dir: string, session: number): Promise<void> {
  const c = colours();
  const say = (who: string, text: string) =>
    process.stdout.write(`${(who === "ui" ? c.cyan : c.yellow)(`[${who}]`.padEnd(5))} ${text}\n`);
  const stores = await fsStores({ dir });
  const app = createApp(defineConfig({ stores, effects: desktopEffects(), logics: [desktopAssistant] }));
  let quitting: Promise<void> | undefined;
  // Electron: app.on("before-quit", ...). Here the launcher sends { type: "quit" } over IPC (or SIGTERM).
  const quit = (why: string) =>
    (quitting ??= (async () => {
      say("app", `${why}: app.close() stops accepting work, stores.close() checkpoints and releases the lock`);
      await app.close();
      await stores.close();
      const left = REQUESTS.map((r) => r.executionId).filter((id) => !finished.has(id));
      say("app", `closed; ${left.length} executions left unfinished in the journal: ${left.join(", ") || "none"}`);
      process.disconnect?.();
    })());
  process.on("message", (m: { type?: string }) => m?.type === "quit" && void quit("quitting"));
  process.on("SIGTERM", () => void quit("quitting"));

  const finished = new Set<string>();
  app.on("append", ({ executionId, records }) => {
    for (const r of records)
      if (r.type === TRANSITION && r.from === "acting" && r.to !== "acting") tell({ kind: "turn", executionId });
  });
  // The UI: one progress line whenever an actor's state or turn changes.
  const follow = (actor: JournaledActor) => {
    let last = "";
    const show = (snapshot: ReturnType<JournaledActor["getSnapshot"]>) => {
      const { turn, messages } = snapshot.context as { turn: number; messages: unknown[] };
      const line = `${actor.id.padEnd(idWidth)} ${String(snapshot.value).padEnd(9)} turn ${turn + 1} · ${messages.length} messages`;
      if (line !== last && !quitting) say("ui", (last = line));
    };
    show(actor.getSnapshot());
    actor.subscribe(show);
    return actor;
  };

  if (session === 1) {
    say("app", `journal opened in ${relative(root, dir)}/ (fsStores); the user asks for two digests`);
    for (const { executionId, prompt } of REQUESTS)
      follow(await app.start(desktopAssistant, { executionId, input: { prompt } }));
  } else {
    // On launch: every execution of this app's logic that the catalogue still lists as running is resumed.
    const unfinished = (await stores.events.listExecutions()).filter(
      (e) => e.status === "running" && e.logicId === desktopAssistant.id,
    );
    say(
      "app",
      `${unfinished.length} unfinished executions in the catalogue: ${unfinished.map((e) => e.executionId).join(", ")}; resuming`,
    );
    const recorded = new Set<string>();
    for (const { executionId } of unfinished) {
      for (const r of await stores.events.read(executionId))
        if (r.type === STEP_COMPLETED || r.type === STEP_FAILED) recorded.add(r.stepId as string);
    }
    const reran: string[] = [];
    app.on("step", ({ stepId }) => recorded.has(stepId) && reran.push(stepId));
    const { resumed: actors, failed } = await app.resumeUnfinished({
      filter: (e) => e.logicId === desktopAssistant.id,
    });
    if (failed.length > 0) throw new Error(`could not resume ${failed.map((f) => f.executionId).join(", ")}`);
    for (const actor of actors) {
      follow(actor);
      const { recordsReplayed, stepsServedFromLog, stepsToRun } = actor.replay;
      say(
        "app",
        `${actor.id}: replayed ${recordsReplayed} records, served ${stepsServedFromLog} steps from the log; ${stepsToRun} in flight ${stepsToRun === 1 ? "runs" : "run"} again`,
      );
    }
    for (const actor of actors) {
      const output = (await app.result(actor.id)) as { text: string };
      finished.add(actor.id);
      say("app", `${actor.id} done:`);
      for (const line of output.text.split("\n")) process.stdout.write(`        ${line}\n`);
    }
    tell({ kind: "resumed", count: unfinished.length, reran });
    await quit("all caught up, the user quits");
  }
}

// --------------------------------------------------------------------------------------- the launcher

function launch(
  dir: string,
  session: number,
  idSuffix: string,
  onMessage: (m: Record<string, any>) => void,
  prefix: string,
) {
  const env = { ...process.env, ...(colours().on ? { FORCE_COLOR: "1" } : { NO_COLOR: "1" }) };
  const proc = spawn(process.execPath, ["--import", "tsx", thisFile, "--app", dir, String(session), idSuffix], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  let buffered = "";
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.startsWith(CHILD_TAG)) onMessage(JSON.parse(line.slice(CHILD_TAG.length)));
      else process.stdout.write(`${prefix}${line}\n`);
    }
  });
  const exited = new Promise<number | null>((done) => proc.on("exit", (code) => done(code)));
  return { proc, exited };
}

async function launcher(): Promise<void> {
  const c = colours();
  const given = option("--dir") ?? process.env.LOOMWORK_DIR;
  // A given directory is written beside what it holds (nothing deleted); the default one is the story's own.
  const dir = given ? resolve(given) : await defaultStoryDir(".tmp/desktop-embed", "desktop-embed");
  const used = (await readdir(join(dir, "executions")).catch(() => [])).length > 0;
  const idSuffix = used ? `-${Date.now().toString(36)}` : "";
  const out = (text = "") => process.stdout.write(`${text}\n`);
  const head = (text: string) => out(`\n${c.bold(c.cyan("▸"))} ${c.bold(text)}`);
  const bar = c.dim("  │ ");

  out(`${c.bold("loomwork")} ${c.dim("·")} desktop-embed`);
  out(c.dim("Agent actors inside a long-lived Node process (as in Electron's main process), journaled with fsStores."));

  head("app session 1: the user asks for two folder digests");
  const midRun = new Set<string>();
  let quitSent = false;
  const first = launch(
    dir,
    1,
    idSuffix,
    (m) => {
      // The user quits as soon as each run has a turn journaled: both are mid-run.
      if (m.kind === "turn" && midRun.add(m.executionId).size === REQUESTS.length && !quitSent) {
        quitSent = true;
        out(`${bar}${c.bold("the user quits the app")} ${c.dim("(before-quit)")}`);
        first.proc.send({ type: "quit" });
      }
    },
    bar,
  );
  const code1 = await first.exited;
  out(c.dim(`  session 1 exited with code ${code1}`));
  if (code1 !== 0) throw new Error(`app session 1 failed (exit code ${code1}).`);

  head("app session 2: the app starts again and resumes what was unfinished");
  let resumed: Record<string, any> | undefined;
  const second = launch(dir, 2, idSuffix, (m) => m.kind === "resumed" && (resumed = m), bar);
  const code2 = await second.exited;
  out(c.dim(`  session 2 exited with code ${code2}`));
  if (code2 !== 0 || !resumed) throw new Error(`app session 2 failed (exit code ${code2}).`);

  const reran = resumed.reran as string[];
  head("result");
  out(
    `    ${resumed.count} executions finished after the restart; re-ran ${reran.length === 0 ? c.green("0 recorded steps ✓") : c.red(`${reran.length} recorded steps: ${reran.join(", ")}`)}`,
  );
  if (reran.length > 0) process.exitCode = 1;
}

if (args.includes("--app")) await appProcess(option("--app")!, Number(args[args.indexOf("--app") + 2]));
else await launcher();
