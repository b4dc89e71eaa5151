// loomwork queues: the fleet's queues on PostgreSQL (flow control): each queue's limits, its depth (executions waiting
// for a slot) and the executions running per key. Read only: one connection, no migration run, nothing written.
import pg from "pg";
import { command } from "../context.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { postgresOptions, postgresTarget } from "../postgres.js";
import { printable, table } from "../terminal.js";

interface KeyRow {
  key: string;
  waiting: number;
  running: number;
}

interface QueueRow {
  name: string;
  concurrency: number | null;
  perKey: number | null;
  rate: { limit: number; periodMs: number } | null;
  waiting: number;
  running: number;
  keys: KeyRow[];
}

export const queues = command(
  "queues",
  "Show the fleet's queues on PostgreSQL: limits, depth (waiting) and executions running per key.",
  {
    args: { "[queue...]": "only these queues (default: all)" },
    options: postgresOptions("the fleet's database (default: $LOOMWORK_PG_URL, else $DATABASE_URL)"),
    details: [
      "Running means admitted (claimed at least once) and not ended: it holds one of the queue's slots, also while parked or " +
        "between workers after a crash. Waiting means submitted and not yet admitted. Read with one connection; nothing is written.",
    ],
    examples: ["loomwork queues --postgres postgres://localhost/app", "loomwork queues perUser --json"],
  },
  async (ctx) => {
    const target = postgresTarget(ctx, { fromEnv: true });
    if (!target) throw new UsageError("no database: pass --postgres <url>", "or set LOOMWORK_PG_URL or DATABASE_URL");
    const { url, schema } = target;
    const only = ctx.positionals;
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => undefined);
    let rows: QueueRow[];
    try {
      await client.connect();
      rows = await read(client, `"${schema}"`, only);
    } catch (error) {
      if (error instanceof CliError) throw error;
      const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
      // 42P01: no queues table (no fleet in this schema, or a loomwork before queues).
      if (code === "42P01")
        throw new CliError(`no fleet queues in schema "${schema}"`, EXIT.notFound, "check --schema and --postgres");
      throw new CliError(`cannot read the fleet's queues: ${(error as Error).message}`, EXIT.failure);
    } finally {
      await client.end().catch(() => undefined);
    }
    const missing = only.filter((name) => !rows.some((q) => q.name === name));
    if (ctx.json) ctx.printJson({ queues: rows });
    else if (rows.length === 0) ctx.out("no queues");
    else {
      const limit = (q: QueueRow) =>
        [
          q.concurrency === null ? "" : `concurrency ${q.concurrency}`,
          q.perKey === null ? "" : `perKey ${q.perKey}`,
          q.rate === null ? "" : `rate ${q.rate.limit}/${q.rate.periodMs} ms`,
        ]
          .filter(Boolean)
          .join(", ") || "no limit";
      for (const q of rows) {
        ctx.out(`${ctx.c.bold(printable(q.name))}  ${limit(q)}  waiting ${q.waiting}  running ${q.running}`);
        if (q.keys.length > 0)
          for (const line of table(
            [
              ["  key", "running", "waiting"],
              ...q.keys.map((k) => [
                `  ${k.key === "" ? '""' : printable(k.key)}`,
                String(k.running),
                String(k.waiting),
              ]),
            ],
            [1, 2],
          ))
            ctx.out(line);
      }
    }
    if (missing.length > 0)
      throw new CliError(`no queue ${missing.map((m) => `"${m}"`).join(", ")} in schema "${schema}"`, EXIT.notFound);
  },
);

async function read(client: pg.Client, s: string, only: string[]): Promise<QueueRow[]> {
  const { rows: defined } = await client.query<{
    name: string;
    concurrency: number | null;
    per_key: number | null;
    rate_limit: number | null;
    rate_period_ms: number | null;
  }>(
    `SELECT name, concurrency, per_key, rate_limit, rate_period_ms FROM ${s}.queues
     WHERE cardinality($1::text[]) = 0 OR name = ANY($1::text[]) ORDER BY name`,
    [only],
  );
  const { rows: counts } = await client.query<{ queue: string; key: string; waiting: number; running: number }>(
    `SELECT f.queue, f.queue_key AS key,
       count(*) FILTER (WHERE f.admitted_at IS NULL)::int AS waiting,
       count(*) FILTER (WHERE f.admitted_at IS NOT NULL)::int AS running
     FROM ${s}.fleet f JOIN ${s}.executions e ON e.execution_id = f.execution_id
     WHERE f.queue IS NOT NULL AND e.status = 'running' AND (cardinality($1::text[]) = 0 OR f.queue = ANY($1::text[]))
     GROUP BY f.queue, f.queue_key ORDER BY f.queue, running DESC, waiting DESC, f.queue_key`,
    [only],
  );
  return defined.map((q) => {
    const keys = counts
      .filter((c) => c.queue === q.name)
      .map(({ key, waiting, running }) => ({ key, waiting, running }));
    return {
      name: q.name,
      concurrency: q.concurrency,
      perKey: q.per_key,
      rate: q.rate_limit === null ? null : { limit: q.rate_limit, periodMs: q.rate_period_ms! },
      waiting: keys.reduce((sum, k) => sum + k.waiting, 0),
      running: keys.reduce((sum, k) => sum + k.running, 0),
      keys,
    };
  });
}
