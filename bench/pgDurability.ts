// The fleet benchmark's durability modes: a PostgreSQL server's crash-safety settings, switched with
// `ALTER SYSTEM` and a reload between rows (each is reloadable), and read back from a fresh connection so a
// row is labelled with the mode it really ran in.
import pg from "pg";

/** "on": PostgreSQL's defaults, as users run it (each commit waits for its WAL flush); "off": none of it. */
export type Durability = "on" | "off";

/** The settings a mode sets. `full_page_writes` goes with `fsync`: the defaults have both on. */
const SETTINGS = ["fsync", "synchronous_commit", "full_page_writes"] as const;
type Settings = Record<(typeof SETTINGS)[number], string>;

/** The crash-safety settings a fresh connection sees. */
export async function durabilitySettings(url: string): Promise<Settings> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = {} as Settings;
    for (const name of SETTINGS)
      found[name] = (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
    return found;
  } finally {
    await client.end();
  }
}

/** "on" or "off" when every setting agrees, else the settings themselves (a user's server, LOOMWORK_PG_URL). */
export function durabilityLabel(settings: Settings): string {
  const values = new Set(Object.values(settings));
  if (values.size === 1 && (values.has("on") || values.has("off"))) return [...values][0]!;
  return SETTINGS.map((name) => `${name} ${settings[name]}`).join(", ");
}

/**
 * Sets a mode on a server this process owns and waits until a fresh connection sees it: a reload reaches
 * new backends once the postmaster has read the file, which is not when `pg_reload_conf()` returns.
 */
export async function setDurability(url: string, mode: Durability): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const name of SETTINGS) await client.query(`ALTER SYSTEM SET ${name} = ${mode}`);
    await client.query("SELECT pg_reload_conf()");
  } finally {
    await client.end();
  }
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = await durabilitySettings(url);
    if (durabilityLabel(found) === mode) return;
    if (Date.now() > deadline)
      throw new Error(`the server did not take durability ${mode}: a fresh connection sees ${durabilityLabel(found)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
