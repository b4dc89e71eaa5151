// The single-writer lock of a journal directory: a file naming its holder (pid, host, token, and the
// holder's identity beyond the pid: its process start time and the machine's boot id).
//
// Invariants:
// - The lock file always holds complete JSON: it is written under a temp name and published with
//   link(2), which fails with EEXIST when a holder exists (the O_EXCL of a complete file).
// - A lock whose holder is gone is stale and taken over: its pid is dead on this host; or the pid is
//   alive but is not the holder any more (a pid reused by an unrelated process: the boot id differs, or
//   the process under that pid started at another time than the holder did); or it is our own pid with
//   a token this process never issued (a container restart reuses low pids). A lock without the
//   identity fields (written by an older loomwork) is judged by its pid alone.
// - Taking over renames the stale file to a private name first, so of two processes racing for it
//   exactly one gets it (a third one arriving in the instant a wrongly moved lock is put back is not covered).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { link, readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { WriterLockedError } from "../../stores/errors.js";
import { hasCode } from "./directory.js";

export const LOCK_FILE = "loomwork.lock";

interface LockContent {
  pid: number;
  hostname: string;
  token: string;
  acquiredAt: string;
  /** The holder's process start time, `linux:<ticks since boot>` or `ps:<lstart>`; absent in old locks. */
  processStart?: string;
  /** The machine's boot id (Linux); absent elsewhere and in old locks. */
  bootId?: string;
}

/** What tells a process apart from a later one given the same pid: its start time, and the boot it ran in. */
interface ProcessIdentity {
  processStart?: string;
  bootId?: string;
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The start time of process `pid` as an opaque string, or undefined when it cannot be read here. */
async function processStartOf(pid: number): Promise<string | undefined> {
  if (process.platform === "linux") {
    const stat = await readTrimmed(`/proc/${pid}/stat`);
    if (stat === undefined) return undefined;
    // Field 2 (comm) is parenthesized and may hold spaces or parentheses: count from the last ")".
    // What follows it starts at field 3, so field 22 (starttime, clock ticks since boot) is index 19.
    const ticks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return ticks && /^\d+$/.test(ticks) ? `linux:${ticks}` : undefined;
  }
  if (process.platform === "win32") return undefined;
  // macOS and the BSDs: ps prints the start time to the second, which is enough to tell two processes apart.
  return new Promise((resolve) => {
    execFile("ps", ["-o", "lstart=", "-p", String(pid)], { env: { ...process.env, LC_ALL: "C" }, timeout: 2_000 }, (error, stdout) => {
      const start = stdout.trim().replace(/\s+/g, " ");
      resolve(error || !start ? undefined : `ps:${start}`);
    });
  });
}

let ownBootId: Promise<string | undefined> | undefined;
const bootIdOfThisMachine = (): Promise<string | undefined> =>
  (ownBootId ??= process.platform === "linux" ? readTrimmed("/proc/sys/kernel/random/boot_id") : Promise.resolve(undefined));

async function identityOf(pid: number): Promise<ProcessIdentity> {
  const [processStart, bootId] = await Promise.all([processStartOf(pid), bootIdOfThisMachine()]);
  return { ...(processStart === undefined ? {} : { processStart }), ...(bootId === undefined ? {} : { bootId }) };
}

// Tokens of the locks this process holds: a second fsStores on the same directory in this process
// is refused like one in another process.
const heldTokens = new Set<string>();

async function readLock(path: string): Promise<LockContent | undefined | "missing"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (hasCode(error, "ENOENT")) return "missing";
    throw error;
  }
  try {
    const value = JSON.parse(text) as LockContent;
    return typeof value.pid === "number" && typeof value.token === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

// Unreadable content (never passed here) cannot come from a live holder: a lock is published whole.
// Whatever cannot be read (another host, no /proc, an old lock) counts as alive: a refusal, never a takeover.
async function holderAlive(holder: LockContent): Promise<boolean> {
  if (holder.hostname !== hostname()) return true;
  if (holder.pid === process.pid) return heldTokens.has(holder.token);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return !hasCode(error, "ESRCH");
  }
  // The pid is alive: is it still the holder, or a later process given the same pid?
  const now = await identityOf(holder.pid);
  if (holder.bootId !== undefined && now.bootId !== undefined && holder.bootId !== now.bootId) return false;
  if (holder.processStart !== undefined && now.processStart !== undefined && holder.processStart !== now.processStart) return false;
  return true;
}

function describe(holder: LockContent, path: string): string {
  const held = `held by pid ${holder.pid} on ${holder.hostname} since ${holder.acquiredAt}`;
  if (holder.hostname !== hostname()) {
    return `${held}; a lock naming another host is never taken over: if no process on ${holder.hostname} uses the directory, delete ${path}`;
  }
  if (holder.processStart !== undefined) return `${held}, a process that is alive and is the one that took the lock: stop it or wait for it`;
  return (
    `${held}; the lock records no process start time (written by an older loomwork, or where none can be read), ` +
    `so a pid reused by another program cannot be told from the holder: if no loomwork process uses the directory, delete ${path}`
  );
}

export class DirectoryLock {
  private constructor(
    private readonly path: string,
    private readonly token: string,
    /** The lock was taken over from a holder that is gone: that writer did not close cleanly (ADR 0008). */
    readonly tookOver: boolean,
  ) {}

  /** Takes the writer lock of `dir`, or rejects at once with WriterLockedError naming `dir`. */
  static async acquire(dir: string): Promise<DirectoryLock> {
    const path = join(dir, LOCK_FILE);
    const token = randomBytes(12).toString("hex");
    const content: LockContent = { pid: process.pid, hostname: hostname(), token, acquiredAt: new Date().toISOString(), ...(await identityOf(process.pid)) };
    const temp = `${path}.${token}`;
    await writeFile(temp, JSON.stringify(content));
    try {
      let tookOver = false;
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          await link(temp, path);
          heldTokens.add(token);
          return new DirectoryLock(path, token, tookOver);
        } catch (error) {
          // Our temp file vanished: the holder swept leftovers while we raced it.
          if (hasCode(error, "ENOENT")) throw new WriterLockedError(dir, { cause: error });
          if (!hasCode(error, "EEXIST")) throw error;
        }
        const holder = await readLock(path);
        if (holder === "missing") continue;
        if (holder && (await holderAlive(holder))) throw new WriterLockedError(dir, { cause: new Error(describe(holder, path)) });
        await DirectoryLock.takeOver(dir, path, token, holder);
        tookOver = true;
      }
      throw new WriterLockedError(dir);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  private static async takeOver(dir: string, path: string, token: string, stale: LockContent | undefined): Promise<void> {
    const aside = `${path}.stale-${token}`;
    try {
      await rename(path, aside);
    } catch (error) {
      if (hasCode(error, "ENOENT")) return;
      throw error;
    }
    const moved = await readLock(aside);
    const same = moved !== "missing" && (moved === undefined ? stale === undefined : moved.token === stale?.token);
    if (same) {
      await unlink(aside).catch(() => undefined);
      return;
    }
    // We moved a live holder's fresh lock aside (it took the stale one over first): put it back.
    await link(aside, path).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
    throw new WriterLockedError(dir);
  }

  /** Removes temp and set-aside lock files of crashed contenders; call it while holding the lock. */
  async removeLeftovers(): Promise<void> {
    const dir = dirname(this.path);
    for (const name of await readdir(dir)) {
      if (name.startsWith(`${LOCK_FILE}.`)) await unlink(join(dir, name)).catch(() => undefined);
    }
  }

  /** Releases the lock if this holder still owns it. */
  async release(): Promise<void> {
    if (!heldTokens.delete(this.token)) return;
    const holder = await readLock(this.path);
    if (holder !== "missing" && holder?.token === this.token) await unlink(this.path).catch(() => undefined);
  }
}
