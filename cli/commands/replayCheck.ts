// loomwork replay-check --logic <module>: replays the stored journals against a logic without running any
// effect (checkReplay(app, logic), loomwork/upgrades), one execution at a time, and exits non-zero if any diverges: a deploy gate.
import type { AnyStateMachine } from "xstate";
import { requiredEffects } from "../../actors/logics.js";
import { createApp, declaredVersionOf, defineConfig, type Effect } from "../../index.js";
import { command } from "../context.js";
import { EXIT, UsageError } from "../errors.js";
import { progress, type Palette } from "../terminal.js";
import { checkReplay, type ReplayCheckReport, type ReplayCheckResult } from "../../upgrades.js";

export const replayCheck = command(
  "replay-check",
  "Replay the stored journals against a logic, running nothing, and report where each diverges (a deploy gate).",
  {
    args: { "[executionId...]": "only these executions (default: every execution of each exported logic's id)" },
    options: {
      logic: {
        type: "string",
        value: "<module>",
        description: "a module exporting the new machines (file.ts or file.ts#name), required",
      },
      limit: { type: "string", value: "<n>", description: "check at most n executions per logic" },
    },
    details: [
      "Each execution of the logic's id is replayed from seq 1 through the pure planner against the given machine: no model, " +
        'tool or effect runs and the directory is not written. An execution is compatible, or it "diverges at seq N: the journal ' +
        'has X, the logic produced Y", or it is unreadable (a damaged file, a key it lacks). Results are printed as they come; one ' +
        "log is in memory at a time.",
      `Exit code ${EXIT.ok} when every checked execution is compatible, ${EXIT.failure} when any diverges or is unreadable: gate a deploy on it.`,
    ],
    examples: [
      "loomwork replay-check --logic dist/flows.js",
      "loomwork replay-check --logic src/agents.ts#researcherV2 --limit 1000",
      "loomwork replay-check --logic dist/flows.js --json | jq '.[].diverged'",
    ],
  },
  async (ctx) => {
    if (typeof ctx.values.logic !== "string")
      throw new UsageError(
        "replay-check needs --logic <module>",
        "Pass the module that exports the new machine, e.g. --logic dist/flows.js.",
      );
    const limit = ctx.values.limit === undefined ? undefined : Number(ctx.values.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
      throw new UsageError(
        `--limit ${String(ctx.values.limit)} is not a non-negative integer`,
        "Pass a count, e.g. --limit 1000.",
      );
    const logics = await (await import("../replay.js")).loadLogics(ctx.values.logic);
    const stores = await ctx.journal();
    // Effects that never run: the check serves every step from the journal. The app's key store opens sealed records.
    const never: Effect = { kind: "task", run: () => new Promise(() => undefined) };
    const effects = Object.fromEntries(logics.flatMap(requiredEffects).map((id) => [id, never]));
    const app = createApp(
      defineConfig({
        stores,
        effects,
        execution: { snapshotEvery: false },
        security: { crypto: { keys: stores.keys } },
      }),
    );
    const { c } = ctx;
    const reports: (ReplayCheckReport & { version: string | undefined })[] = [];
    try {
      for (const logic of logics) {
        const label = labelOf(logic);
        // The total is known once the check has listed the executions: the bar starts with the first result.
        let bar: ReturnType<typeof progress> | undefined;
        const report = await checkReplay(app, logic, {
          ...(ctx.positionals.length ? { executionIds: ctx.positionals } : {}),
          ...(limit === undefined ? {} : { limit }),
          ...(ctx.json
            ? {}
            : { onResult: (result: ReplayCheckResult) => result.status === "compatible" || ctx.out(line(result, c)) }),
          onProgress: ({ checked, total }) =>
            (bar ??= progress(`checking ${label}`, total, { atLeast: 20 })).tick(checked, total),
        });
        bar?.end();
        reports.push({ ...report, version: declaredVersionOf(logic) });
        if (!ctx.json) {
          const verdict = report.ok
            ? c.green("compatible")
            : c.red(`${report.diverged} diverge, ${report.unreadable} unreadable`);
          ctx.out(`${c.bold(label)}: ${report.checked} checked, ${report.compatible} compatible · ${verdict}`);
        }
      }
    } finally {
      await app.close();
    }
    if (ctx.json) ctx.printJson(reports);
    return reports.every((r) => r.ok) ? EXIT.ok : EXIT.failure;
  },
);

function labelOf(logic: AnyStateMachine): string {
  const version = declaredVersionOf(logic);
  return version === undefined ? logic.id : `${logic.id}@${version}`;
}

function line(result: ReplayCheckResult, c: Palette): string {
  if (result.status === "diverges") return `${c.red("✗")} ${c.bold(result.executionId)} ${result.message}`;
  if (result.status === "unreadable")
    return `${c.yellow("?")} ${c.bold(result.executionId)} unreadable: ${result.message}`;
  return `${c.bold(result.executionId)} compatible`;
}
