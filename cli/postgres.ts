// The fleet's database for the commands that read or change it (queues, schedules, follow): the --postgres and
// --schema options, declared and read the same way by each.
import { DEFAULT_SCHEMA, SCHEMA_NAME } from "../adapters/postgres/constants.js";
import type { OptionSpec } from "./args.js";
import type { Context } from "./context.js";
import { UsageError } from "./errors.js";

/** A fleet's database: the connection string and the schema of its tables. */
export interface PostgresTarget {
  url: string;
  schema: string;
}

/** The --postgres and --schema options, `url` saying what the database is for this command. */
export function postgresOptions(url: string): Record<"postgres" | "schema", OptionSpec> {
  return {
    postgres: { type: "string", value: "<url>", description: url },
    schema: {
      type: "string",
      value: "<schema>",
      description: `the schema of the fleet's tables (default: ${DEFAULT_SCHEMA})`,
    },
  };
}

/**
 * The database the command was given: --postgres, else with `fromEnv` $LOOMWORK_PG_URL, else $DATABASE_URL; undefined
 * when none (the command reads its journal directory then). --schema without a database, or one that is not a plain
 * lower-case identifier, is a usage error.
 */
export function postgresTarget(ctx: Context, options: { fromEnv: boolean }): PostgresTarget | undefined {
  const url =
    (ctx.values.postgres as string | undefined) ??
    (options.fromEnv ? process.env.LOOMWORK_PG_URL || process.env.DATABASE_URL || undefined : undefined);
  const given = ctx.values.schema as string | undefined;
  if (url === undefined) {
    if (given !== undefined) throw new UsageError("--schema goes with --postgres", `loomwork ${ctx.spec.name} --help`);
    return undefined;
  }
  const schema = given ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema))
    throw new UsageError(`--schema must be a plain lower-case identifier; got "${schema}"`);
  return { url, schema };
}
