// The single-writer lock of a journal directory: a file naming its holder (pid, host, token).
//
// Invariants:
// - The lock file always holds complete JSON: it is written under a temp name and published with
//   link(2), which fails with EEXIST when a holder exists (the O_EXCL of a complete file).
// - A lock whose holder is gone (pid dead on this host, or our own pid with a token this process
//   never issued: a container restart reuses low pids) is stale and taken over. Taking over renames
//   the stale file to a private name first, so of two processes racing for it exactly one gets it
//   (a third one arriving in the instant a wrongly moved lock is put back is not covered).
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
function holderAlive(holder: LockContent): boolean {
  if (holder.hostname !== hostname()) return true;
  if (holder.pid === process.pid) return heldTokens.has(holder.token);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return !hasCode(error, "ESRCH");
  }
}

function describe(holder: LockContent, path: string): string {
  return (
    `held by pid ${holder.pid} on ${holder.hostname} since ${holder.acquiredAt}; ` +
    `if no such process uses the directory any more (a pid reused by another program), delete ${path}`
  );
}

export class DirectoryLock {
  private constructor(
    private readonly path: string,
    private readonly token: string,
  ) {}

  /** Takes the writer lock of `dir`, or rejects at once with WriterLockedError naming `dir`. */
  static async acquire(dir: string): Promise<DirectoryLock> {
    const path = join(dir, LOCK_FILE);
    const token = randomBytes(12).toString("hex");
    const content: LockContent = { pid: process.pid, hostname: hostname(), token, acquiredAt: new Date().toISOString() };
    const temp = `${path}.${token}`;
    await writeFile(temp, JSON.stringify(content));
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          await link(temp, path);
          heldTokens.add(token);
          return new DirectoryLock(path, token);
        } catch (error) {
          // Our temp file vanished: the holder swept leftovers while we raced it.
          if (hasCode(error, "ENOENT")) throw new WriterLockedError(dir, { cause: error });
          if (!hasCode(error, "EEXIST")) throw error;
        }
        const holder = await readLock(path);
        if (holder === "missing") continue;
        if (holder && holderAlive(holder)) throw new WriterLockedError(dir, { cause: new Error(describe(holder, path)) });
        await DirectoryLock.takeOver(dir, path, token, holder);
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
