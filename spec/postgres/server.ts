// A throwaway PostgreSQL cluster for the suites: initdb into a temporary directory, started on a free port
// on 127.0.0.1 (and a socket in the same directory), stopped and removed at the end. As root, the server
// runs as the `postgres` user (Debian's package creates it) or `nobody`: PostgreSQL refuses to run as root.
// LOOMWORK_PG_URL points the suites at another server instead (then nothing is started).
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/** The server the suites run against. */
export interface PgServer {
  /** A connection string for a database of the server. */
  url: string;
  /** True when this process started the cluster (so it may stop and restart it). */
  readonly owned: boolean;
  /** Stops the server (`immediate`: as a crash, no checkpoint); an owned cluster only. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts a stopped owned cluster again on the same port. */
  start(): Promise<void>;
  /** Stops the server and removes its directory (a no-op for LOOMWORK_PG_URL). */
  dispose(): Promise<void>;
}

/** Where PostgreSQL's server binaries are: LOOMWORK_PG_BIN, else the newest /usr/lib/postgresql/<v>/bin. */
export function postgresBinDir(): string {
  if (process.env.LOOMWORK_PG_BIN) return process.env.LOOMWORK_PG_BIN;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      "PostgreSQL server binaries not found: apt-get install -y postgresql (Debian), set LOOMWORK_PG_BIN to their directory, or LOOMWORK_PG_URL to a server.",
    );
  return join(root, versions[0]!, "bin");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function unprivilegedUser(): Promise<{ name: string; uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number((await run("id", ["-u", name])).stdout.trim());
      const gid = Number((await run("id", ["-g", name])).stdout.trim());
      return { name, uid, gid };
    } catch {
      // try the next one
    }
  }
  throw new Error("running as root and neither a postgres nor a nobody user exists to run PostgreSQL as");
}

/** Starts a throwaway cluster, or wraps LOOMWORK_PG_URL. */
export async function startPostgres(
  options: {
    external?: boolean;
    /**
     * Where the cluster's crash-safety settings (`fsync`, `full_page_writes`, off for speed: the cluster is
     * thrown away) are set: on the command line, which `ALTER SYSTEM` cannot override, or with `ALTER
     * SYSTEM` once started, so a benchmark can turn them back on with `ALTER SYSTEM` and a reload.
     * @defaultValue "command-line"
     */
    durabilitySettings?: "command-line" | "alter-system";
  } = {},
): Promise<PgServer> {
  const external = process.env.LOOMWORK_PG_URL;
  if (external && options.external !== false) {
    return {
      url: external,
      owned: false,
      stop: async () => {
        throw new Error("LOOMWORK_PG_URL: not a server this test owns");
      },
      start: async () => undefined,
      dispose: async () => undefined,
    };
  }
  const bin = postgresBinDir();
  const user = await unprivilegedUser();
  const dir = await mkdtemp(join(tmpdir(), "loomwork-pg-"));
  const data = join(dir, "data");
  if (user) {
    await chown(dir, user.uid, user.gid);
    await chmod(dir, 0o700);
  }
  const as = (cmd: string, args: string[]) =>
    user ? run("runuser", ["-u", user.name, "--", join(bin, cmd), ...args]) : run(join(bin, cmd), args);
  await as("initdb", ["-D", data, "-U", "loomwork", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  const port = await freePort();
  const durabilityOff = "-c fsync=off -c full_page_writes=off";
  const alterSystem = options.durabilitySettings === "alter-system";
  const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} ${alterSystem ? "" : durabilityOff} -c max_connections=200 -c shared_buffers=32MB`;
  let running = false;
  const start = async () => {
    await as("pg_ctl", ["-D", data, "-o", serverOptions, "-l", join(dir, "server.log"), "-w", "-t", "60", "start"]);
    running = true;
  };
  const stop = async (mode: "fast" | "immediate" = "fast") => {
    await as("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"]);
    running = false;
  };
  await start();
  const url = `postgres://loomwork@127.0.0.1:${port}/postgres`;
  if (alterSystem) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("ALTER SYSTEM SET fsync = off");
      await client.query("ALTER SYSTEM SET full_page_writes = off");
      await client.query("SELECT pg_reload_conf()");
    } finally {
      await client.end();
    }
  }
  return {
    url,
    owned: true,
    stop,
    start,
    dispose: async () => {
      if (running) await stop("immediate").catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

let counter = 0;
/** A fresh schema name, unique per call in this process (tests on one server never share tables). */
export function freshSchema(tag = "t"): string {
  return `${tag}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
}

/** Drops a schema the suite created. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
