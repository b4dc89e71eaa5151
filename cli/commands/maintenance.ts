// loomwork sweep | erase <subject> | export <subject>: maintenance through loomwork/lifecycle's functions of
// an app (sweep, eraseSubject, exportSubject). sweep and erase open the journal as the only writer; export and
// erase --dry-run write nothing and read it beside a running app.
import { stat, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { App } from "../../index.js";
import { command, type Context } from "../context.js";
import { NotFoundError, UsageError } from "../errors.js";
import { bytes, jsonText, progress } from "../terminal.js";
import { eraseSubject, exportSubject as exportSubjectOf, sweep as sweepContent } from "../../lifecycle.js";

/** The sweep's default TTL for telemetry refs: 7 days. */
const DEFAULT_TTL_MS = 7 * 24 * 3600_000;

/** An app over the journal with no effects: enough to sweep, erase and export. */
async function maintenanceApp(ctx: Context): Promise<App> {
  const stores = await ctx.journal();
  const { createApp, defineConfig } = await import("../../index.js");
  return createApp(
    defineConfig({ stores, effects: {}, security: { crypto: { keys: stores.keys } }, compliance: { erase: true } }),
  );
}

/** Runs `work` with the bus's progress events drawn as a bar on stderr (TTY only). */
async function withProgress<T>(app: App, label: string, work: () => Promise<T>): Promise<T> {
  let bar: ReturnType<typeof progress> | undefined;
  const off = app.on("progress", ({ done, total }) => {
    bar ??= progress(label, total ?? 0, { atLeast: 1 });
    bar.tick(done, total);
  });
  try {
    return await work();
  } finally {
    off();
    bar?.end();
  }
}

async function requireSubject(ctx: Context, subject: string): Promise<void> {
  const stores = await ctx.journal();
  const holding = (await stores.events.listExecutions()).filter((e) => e.subject === subject);
  if (holding.length === 0)
    throw new NotFoundError(
      `no execution holds data of subject "${subject}" in ${ctx.dir}`,
      "Subjects are set with app.start(logic, { subject }); `loomwork ls --json` shows them.",
    );
}

/** The subject command's common part: the subject argument, known to the journal, and `task` run on it with a progress bar. */
async function subjectTask<T>(
  ctx: Context,
  label: string,
  task: (app: App, subject: string) => Promise<T>,
): Promise<{ subject: string; result: T }> {
  const subject = ctx.positionals[0]!;
  const app = await maintenanceApp(ctx);
  await requireSubject(ctx, subject);
  return { subject, result: await withProgress(app, label, () => task(app, subject)) };
}

export const sweep = command(
  "sweep",
  "Reclaim claim-checked content no log, archive or snapshot still cites (sweep(app), loomwork/lifecycle).",
  {
    writes: true,
    options: {
      "ttl-ms": {
        type: "string",
        value: "<ms>",
        description: `how long a telemetry ref outlives its citation (default ${DEFAULT_TTL_MS}: 7 days)`,
      },
    },
    details: [
      "Walks every live log, archive segment and snapshot, keeps what is load-bearing (retained envelopes) and reclaims the " +
        "rest with the conditional delete, as a journaled loom.sweep:<n> execution (its log is the audit trail; an " +
        "interrupted sweep is finished by the next). A progress bar shows on a TTY.",
    ],
    examples: ["loomwork sweep", "loomwork sweep --ttl-ms 86400000 --json"],
  },
  async (ctx) => {
    const ttl = ctx.values["ttl-ms"];
    if (ttl !== undefined && !/^\d+$/.test(String(ttl)))
      throw new UsageError(`--ttl-ms must be a whole number of milliseconds; got "${String(ttl)}"`);
    const app = await maintenanceApp(ctx);
    const result = await withProgress(app, "sweeping", () =>
      sweepContent(app, { ttlMs: ttl === undefined ? DEFAULT_TTL_MS : Number(ttl) }),
    );
    if (ctx.json) return ctx.printJson(result);
    ctx.out(
      `swept ${ctx.dir} (${result.sweepId}): walked ${result.executions} executions citing ${result.cited} addresses ` +
        `(${result.pinned} load-bearing); of ${result.scanned} blobs deleted ${result.deleted} (${bytes(result.bytesDeleted)}), kept ${result.kept}`,
    );
  },
);

export const erase = command(
  "erase",
  "Erase a subject's data (eraseSubject(app, subject)): destroy its key, delete its content, journal the result.",
  {
    writes: (values) => values["dry-run"] !== true,
    args: { "<subject>": "the data subject, as given to app.start(..., { subject })" },
    options: {
      "dry-run": {
        type: "boolean",
        description: "show what would be erased (the executions holding the subject, its key) and change nothing",
      },
      yes: {
        type: "boolean",
        short: "y",
        description: "erase without asking: required off a terminal, since erasure cannot be undone",
      },
    },
    details: [
      "Crypto-shredding: the subject's key is destroyed, so every sealed record and blob of theirs becomes unreadable. A crash part-way is finished by running the command again.",
      "Erasure cannot be undone. On a terminal the command asks you to type the subject; off a terminal (a script) it needs --yes. --dry-run shows what would go.",
      "erase takes the journal's writer lock (exit 5 beside a running app); --dry-run writes nothing and works beside it.",
    ],
    examples: ["loomwork erase user-42 --dry-run", "loomwork erase user-42", "loomwork erase user-42 --yes --json"],
  },
  async (ctx) => {
    await requireSubject(ctx, ctx.positionals[0]!);
    if (ctx.values["dry-run"] === true) return eraseDryRun(ctx);
    if (ctx.values.yes !== true) await confirmErase(ctx);
    const { subject, result } = await subjectTask(ctx, "erasing", (app, s) => eraseSubject(app, s));
    if (ctx.json) return ctx.printJson(result);
    ctx.out(
      `erased subject ${subject} (${result.coordinatorId}): ${result.executions.length} executions, key ${result.alreadyErased ? "already destroyed" : "destroyed"}; ` +
        `${result.historiesDeleted.length} unsealed histories deleted; content: ${result.contentDeleted.deleted} blobs deleted, ${result.contentDeleted.retained} retained`,
    );
  },
);

export const exportSubject = command(
  "export",
  "Export a subject's data (exportSubject(app, subject)), content resolved: GDPR Art. 15 / 20.",
  {
    args: { "<subject>": "the data subject" },
    options: {
      output: {
        type: "string",
        short: "o",
        value: "<file>",
        description: "write the export to this file (default: stdout)",
      },
    },
    details: [
      "The export is JSON; with -o the file is written and a one-line summary printed.",
      "Read-only: it takes no lock, so it works beside the app that writes the journal.",
    ],
    examples: ["loomwork export user-42 -o user-42.json", "loomwork export user-42 | jq ."],
  },
  async (ctx) => {
    const file = ctx.values.output as string | undefined;
    // Checked before the export runs: a missing folder is the caller's mistake, not a failed export.
    if (file !== undefined) await assertFolderOf(file);
    const { subject, result: data } = await subjectTask(ctx, "exporting", (app, s) => exportSubjectOf(app, s));
    const text = `${jsonText(data, 2)}\n`;
    if (!file) return void process.stdout.write(text);
    // A subject's data: created 0600, the owner's alone, as the journal's own files are.
    await writeFile(file, text, { mode: 0o600 });
    if (ctx.json) return ctx.printJson({ subject, file, bytes: Buffer.byteLength(text) });
    ctx.out(`exported subject ${subject} to ${file} (${Buffer.byteLength(text)} bytes)`);
  },
);

// -o names a file in a folder that must exist (the CLI does not create folders).
async function assertFolderOf(file: string): Promise<void> {
  const folder = dirname(resolve(file));
  const found = await stat(folder).catch(() => undefined);
  if (!found)
    throw new NotFoundError(
      `the folder ${folder} does not exist`,
      `Create it first (mkdir -p ${folder}), or pass -o a file in an existing folder.`,
    );
  if (!found.isDirectory()) throw new UsageError(`${folder} is not a folder`, "Pass -o a file in an existing folder.");
}

// What erase would touch, from the catalogue and the key store, opened read-only (no lock).
async function eraseDryRun(ctx: Context): Promise<void> {
  const subject = ctx.positionals[0]!;
  const stores = await ctx.journal();
  const executions = (await stores.events.listExecutions())
    .filter((e) => e.subject === subject)
    .map((e) => ({ executionId: e.executionId, status: e.status, records: e.head }));
  const key = (await stores.keys.isDestroyed(subject))
    ? "destroyed"
    : (await stores.keys.get(subject))
      ? "present"
      : "none";
  if (ctx.json) return ctx.printJson({ dryRun: true, subject, executions, key });
  ctx.out(
    `would erase subject ${subject}: ${executions.length} executions (${executions.map((e) => `${e.executionId} ${e.status}, ${e.records} records`).join("; ")}), key ${key}; nothing was changed`,
  );
}

// Erasure is irreversible: a terminal user types the subject, a script passes --yes.
async function confirmErase(ctx: Context): Promise<void> {
  const subject = ctx.positionals[0]!;
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new UsageError(
      `erase cannot be undone: pass --yes to erase subject "${subject}"`,
      "Off a terminal the command does not ask. `--dry-run` shows what would be erased.",
    );
  }
  const { createInterface } = await import("node:readline/promises");
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(
      `Erasing subject "${subject}" destroys its key and content for good. Type the subject to confirm: `,
    );
    if (answer.trim() !== subject) throw new UsageError("erase not confirmed: nothing was changed");
  } finally {
    prompt.close();
  }
}
