// Child executions (issue 33, ADR 0012): what a child machine costs against the same effect done by the parent
// itself (time, interleaved, and journal bytes, exact), what a child costs at a fan-out of 10, 100 and 1,000 children
// started in one macrostep and joined, and a resume of a tree left mid-run against the read floor of its logs.
import { setup, type AnyStateMachine } from "xstate";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { createToolEffect } from "../actors/effects/effect.js";
import { effectActor } from "../machines/helpers/effectActor.js";
import { interleave, medianSample, ratioOf, span, type Sample } from "./measure.js";
import type { BenchOptions } from "./options.js";
import { bytes, ratios, type Section } from "./report.js";
import { openStores, reopenStores, type StoreKind } from "./stores.js";
import { readFsFloor } from "./fsFloor.js";
import { fanOut } from "../spec/children/machines.js";
import { createWorker, postgresStores } from "../adapters/postgres/index.js";
import { dropSchema, freshSchema, startPostgres } from "../spec/postgres/server.js";

const effects = { work: createToolEffect(async (n: number) => n + 1) };

const worker = setup({ actors: { work: effectActor<number, number>() } }).createMachine({
  id: "worker",
  initial: "working",
  states: { working: { invoke: { id: "w", src: "work", input: 1, onDone: "done" } }, done: { type: "final" } },
  output: () => 1,
});

/** The parent invokes the worker machine, which does the effect. */
const viaChild = setup({ actors: { worker } }).createMachine({
  id: "viaChild",
  initial: "running",
  states: { running: { invoke: { id: "c", src: "worker", onDone: "done" } }, done: { type: "final" } },
});

/** The parent does the effect itself. */
const inline = setup({ actors: { work: effectActor<number, number>() } }).createMachine({
  id: "inline",
  initial: "running",
  states: { running: { invoke: { id: "w", src: "work", input: 1, onDone: "done" } }, done: { type: "final" } },
});

/** A tree of `n` children each waiting for an event: what a resume rebuilds. */
function waitingTree(n: number) {
  const waiter = setup({}).createMachine({
    id: "waiter",
    initial: "waiting",
    states: { waiting: { on: { GO: "done" } }, done: { type: "final" } },
  });
  return setup({ actors: { waiter } }).createMachine({
    id: `tree${n}`,
    invoke: Array.from({ length: n }, (_, i) => ({ id: `w${i}`, src: "waiter" as const })),
  });
}

async function run(kind: StoreKind, logic: AnyStateMachine): Promise<Sample & { bytes: number }> {
  const opened = await openStores(kind);
  try {
    const app = createApp(defineConfig({ stores: opened.stores, effects }));
    const end = span();
    await app.start(logic, { executionId: "r" });
    await app.result("r");
    const sample = end();
    let total = 0;
    for (const info of await opened.stores.events.listExecutions())
      total += (await app.stats(info.executionId)).logBytes;
    await app.close();
    return { ...sample, bytes: total };
  } finally {
    await opened.close();
  }
}

async function resumeTree(n: number, reps: number): Promise<{ resume: Sample; floor: Sample; executions: number }> {
  const tree = waitingTree(n);
  const opened = await openStores("fs");
  try {
    const first = createApp(defineConfig({ stores: opened.stores, effects }));
    const actor = await first.start(tree, { executionId: "t" });
    await actor.settled();
    await first.close();
    await opened.close();
    const resumes: Sample[] = [];
    const floors: Sample[] = [];
    let executions = 0;
    // Each rep reopens the directory twice, cold both times: once to read every log (the floor), once to resume; the
    // order alternates so neither always finds the other's page cache.
    const floorRun = async () => {
      const end = span();
      await readFsFloor(opened.kind === "fs" ? opened.dir : "");
      floors.push(end());
    };
    const resumeRun = async () => {
      const reopened = await reopenStores(opened);
      const app = createApp(defineConfig({ stores: reopened.stores, effects, logics: [tree] }));
      const end = span();
      const report = await app.resumeUnfinished();
      await Promise.all(report.resumed.map((a) => a.settled()));
      resumes.push(end());
      executions = report.resumed.length;
      await app.close();
      await reopened.close();
    };
    for (let i = 0; i < reps; i++) {
      if (i % 2 === 0) {
        await floorRun();
        await resumeRun();
      } else {
        await resumeRun();
        await floorRun();
      }
    }
    return { resume: medianSample(resumes), floor: medianSample(floors), executions };
  } finally {
    await opened.close().catch(() => undefined);
  }
}

/** Where a PostgreSQL fan-out runs: one app over `postgresStores` (as the fs row), or the fleet (`app.submit`, a worker). */
export type PostgresFanOut = "app" | "fleet";

/** The fleet's worker in the fan-out: in this process, so its CPU is this process's (the server's is not counted). */
const FLEET_CONCURRENCY = 8;

/** One fan-out of `n` children on a fresh schema of `url`: started and joined, timed from the start (or submit) to the result. */
export async function fanOutOnPostgres(url: string, n: number, where: PostgresFanOut): Promise<Sample> {
  const schema = freshSchema("fan");
  const stores = await postgresStores({ url, schema, pollMs: 50 });
  const logic = fanOut(`fan${n}`, n, worker);
  try {
    if (where === "app") {
      const app = createApp(defineConfig({ stores, effects }));
      const end = span();
      await app.start(logic, { executionId: "r" });
      await app.result("r");
      const sample = end();
      await app.close();
      return sample;
    }
    const fleetWorker = await createWorker({
      stores,
      logics: [logic],
      effects,
      concurrency: FLEET_CONCURRENCY,
      pollMs: 50,
      signals: [],
    });
    const app = createApp(defineConfig({ stores, effects: {} }));
    const end = span();
    await app.submit(logic, { executionId: "r" });
    await app.result("r");
    const sample = end();
    await app.close();
    await fleetWorker.stop();
    return sample;
  } finally {
    await stores.close();
    await dropSchema(url, schema);
  }
}

export async function measureChildren(options: BenchOptions): Promise<Section> {
  const reps = options.inProcessReps;
  const rows: string[][] = [];
  const raw: Record<string, unknown> = {};
  for (const kind of ["memory", "fs"] as const) {
    const sizes = { child: 0, inline: 0 };
    const samples = await interleave(
      {
        child: async () => {
          const s = await run(kind, viaChild);
          sizes.child = s.bytes;
          return s;
        },
        inline: async () => {
          const s = await run(kind, inline);
          sizes.inline = s.bytes;
          return s;
        },
      },
      { reps, warmup: options.warmup },
    );
    const r = ratioOf(samples.child!, samples.inline!);
    rows.push([kind, ratios(r), bytes(sizes.child), bytes(sizes.inline)]);
    raw[kind] = { samples, sizes };
  }
  const fanRows: string[][] = [];
  const perChild: Record<number, Sample> = {};
  const fanReps = Math.max(1, Math.min(reps, 5));
  for (const n of [10, 100, 1000]) {
    const samples: Sample[] = [];
    for (let i = 0; i < fanReps; i++) samples.push(await run("fs", fanOut(`fan${n}`, n, worker)));
    const m = medianSample(samples);
    perChild[n] = { wall: m.wall / n, cpu: m.cpu / n };
  }
  // PostgreSQL: one app over postgresStores, and the fleet (a parent that waits on its children is parked, ADR 0012 D9).
  const pgReps = Math.max(1, Math.min(reps, 3));
  const perChildPg: Record<PostgresFanOut, Record<number, Sample>> = { app: {}, fleet: {} };
  // --quick (the CI smoke test of the bench) skips it: 1,000 children twice on a server of its own is most of a minute.
  const onPostgres = options.mode !== "quick";
  const server = onPostgres ? await startPostgres() : undefined;
  try {
    if (server)
      for (const where of ["app", "fleet"] as const)
        for (const n of [10, 100, 1000]) {
          const samples: Sample[] = [];
          for (let i = 0; i < pgReps; i++) samples.push(await fanOutOnPostgres(server.url, n, where));
          const m = medianSample(samples);
          perChildPg[where][n] = { wall: m.wall / n, cpu: m.cpu / n };
        }
  } finally {
    await server?.dispose();
  }
  const skipped = "not measured (--quick)";
  const against10 = (per: Record<number, Sample>, n: number) =>
    per[n] ? ratios({ wall: per[n].wall / per[10]!.wall, cpu: per[n].cpu / per[10]!.cpu }) : skipped;
  const ms = (per: Record<number, Sample>, n: number) =>
    per[n] ? `${per[n].wall.toFixed(1)} ms (CPU ${per[n].cpu.toFixed(1)} ms)` : skipped;
  for (const n of [10, 100, 1000])
    fanRows.push([
      String(n),
      against10(perChild, n),
      against10(perChildPg.app, n),
      against10(perChildPg.fleet, n),
      `${ms(perChild, n)}; ${ms(perChildPg.app, n)}; ${ms(perChildPg.fleet, n)}`,
    ]);
  const at1000 = perChild[1000]!.wall / perChild[10]!.wall;
  const at1000Pg = (where: PostgresFanOut) => perChildPg[where][1000]!.wall / perChildPg[where][10]!.wall;
  const pgGoal = (where: PostgresFanOut, label: string) => ({
    goal: `per-child cost at 1,000 children within 1.5x of that at 10 (PostgreSQL, ${label})`,
    met: onPostgres ? at1000Pg(where) <= 1.5 : ("not measured" as const),
    detail: onPostgres ? `${at1000Pg(where).toFixed(2)}x` : skipped,
  });
  const tree = await resumeTree(100, fanReps);
  const child = raw.memory as { samples: Record<string, Sample[]> };
  const childRatio = ratioOf(child.samples.child!, child.samples.inline!).wall;
  return {
    id: "children",
    title: "Child executions: a child machine against the effect inline, fan-out, and a tree's resume",
    method: [
      `A parent invoking a child machine that does one effect, against the parent doing that effect itself: ${reps} repetitions interleaved, medians (wall; CPU), and the bytes of every log of the run (\`app.stats(id).logBytes\`, summed: exact).`,
      `Fan-out on \`fsStores\`: 10, 100 and 1,000 children started in one macrostep, each doing one effect, joined by the parent; the time per child as a ratio of that at 10 (${fanReps} runs each, medians).`,
      `Fan-out on PostgreSQL (a throwaway local cluster, fsync off; a fresh schema per run; ${pgReps} runs each, medians): one app over \`postgresStores\` (\`app.start\`, the children run in that app), and the fleet (\`app.submit\`; one \`createWorker\` with concurrency ${FLEET_CONCURRENCY} in this process claims the parent and each child, the parent parked while it waits). CPU is this process's (the server's is not counted).`,
      `Resume: a tree of a root and 100 children waiting for an event on \`fsStores\`, the app closed, then a fresh app's \`resumeUnfinished()\` until every execution settled, against the read floor (reading every file of the journal and parsing every frame, as the resume measurement's floor) in the same process (${fanReps} runs, medians).`,
    ],
    tables: [
      { head: ["stores", "child / inline (median wall; CPU)", "journal bytes, child", "journal bytes, inline"], rows },
      {
        head: [
          "children in one macrostep",
          "time per child / at 10, fs (wall; CPU)",
          "PostgreSQL, one app",
          "PostgreSQL, fleet",
          "time per child: fs; PostgreSQL app; fleet",
        ],
        rows: fanRows,
      },
      {
        head: ["tree (fs)", "executions resumed", "resume / read floor (wall; CPU)"],
        rows: [
          [
            "root + 100 children",
            String(tree.executions),
            ratios({ wall: tree.resume.wall / tree.floor.wall, cpu: tree.resume.cpu / tree.floor.cpu }),
          ],
        ],
      },
    ],
    goals: [
      {
        goal: "a child machine doing one effect at most 2x the effect done inline (memory)",
        met: childRatio <= 2,
        detail: `${childRatio.toFixed(2)}x`,
      },
      {
        goal: "per-child cost at 1,000 children within 1.5x of that at 10 (fs)",
        met: at1000 <= 1.5,
        detail: `${at1000.toFixed(2)}x`,
      },
      pgGoal("app", "one app"),
      pgGoal("fleet", "the fleet"),
    ],
    notes: [
      "A child costs one more log (its start, its transitions, its end) and, in the parent, one outcome record.",
      "On the fleet the time per child falls as children are added: at 10 it is mostly the fixed latency of a claim and a resume per execution (the parent's and each child's) and of the parent's wake, which 1,000 children share while the worker runs 8 of them at once.",
    ],
    raw: { ...raw, perChild, perChildPg, tree },
  };
}
