// A simulated disk behind the fs adapter's fsOps seam (campaigns 2 and 3). Writes go to the real
// files (the page cache: reads see them at once), and the disk remembers what is NOT durable yet:
// the bytes written to a file since its last fsync, a rename since its directory's last fsync, and a
// file whose name was never made durable in its directory. At `crash()` every later operation fails
// (the process is gone), and `applyCrash` rewrites the files as a power cut may leave them.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FsOps } from "../../adapters/fs/index.js";
import { nodeFsOps } from "../../adapters/fs/fsOps.js";

/**
 * What a crash does to the bytes written since the last fsync:
 * - `drop`: none of them reached the disk.
 * - `prefix`: a prefix of them did, cut at any byte (a torn write), in the order they were written.
 * - `garble`: a prefix did, and its tail is garbage or zeros (or the size grew over zeros: XFS-style).
 * - `reorder`: each write independently did or did not; a missing one reads as zeros. Not an ordered
 *   filesystem's behaviour (ext4 data=ordered keeps a file's appends in order); a probe, see docs/reliability.md.
 */
export type CrashMode = "drop" | "prefix" | "garble" | "reorder";

interface Pending {
  /** The file's durable bytes: as of its first write after the last fsync, plus what later fsyncs covered. */
  base: Buffer;
  writes: { position: number; bytes: Buffer }[];
}

/** Thrown by every operation at and after the crash: the process is dead, nothing reaches the disk. */
export class DiskCrashed extends Error {
  readonly code = "EIO";
}

export class SimDisk implements FsOps {
  /** Operations so far (fsync, fsyncDir, write, rename). */
  ops = 0;
  crashed = false;
  /** Fails the operation with this number (and every later one): the crash. */
  crashAt = Infinity;
  /** Operation numbers that fail with EIO without crashing (campaign 3); the disk works again after. */
  readonly failOps = new Set<number>();
  /** Operations that failed with EIO so far. */
  failed: string[] = [];
  private readonly pending = new Map<string, Pending>();
  private readonly renames = new Map<string, { to: string; previous: Buffer | null }[]>();
  /** Files created since their directory's last fsync: their name may vanish. */
  private readonly fresh = new Set<string>();
  private readonly durableNames = new Set<string>();

  /** `root`: the directory the stores will use; every file already in it is durable. */
  constructor(root?: string) {
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else this.durableNames.add(path);
      }
    };
    if (root !== undefined && existsSync(root)) walk(root);
  }

  private tick(op: string, path: string): void {
    if (this.crashed) throw new DiskCrashed(`disk crashed (${op} ${path})`);
    this.ops++;
    if (this.ops >= this.crashAt) {
      this.crashed = true;
      throw new DiskCrashed(`crash at operation ${this.ops} (${op} ${path})`);
    }
    if (this.failOps.has(this.ops)) {
      this.failed.push(`${this.ops} ${op} ${path}`);
      throw Object.assign(new Error(`EIO: i/o error, ${op} '${path}' (injected at operation ${this.ops})`), {
        code: "EIO",
        errno: -5,
        syscall: op,
      });
    }
  }

  /** Crashes now, between operations. */
  crash(): void {
    this.crashed = true;
  }

  /**
   * How long an fsync takes, in event-loop turns: writes that land meanwhile stay unsynced, so group
   * commit leaves several unsynced writes at a crash. 0 makes fsync instant.
   */
  syncTurns = 0;

  private async syncLatency(): Promise<void> {
    for (let i = 0; i < this.syncTurns; i++) await new Promise((resolve) => setImmediate(resolve));
    if (this.crashed) throw new DiskCrashed("disk crashed during an fsync");
  }

  readonly fsync = async (handle: Parameters<FsOps["fsync"]>[0], path: string): Promise<void> => {
    this.tick("fsync", path);
    // The durability is simulated (the real fsync would only cost time): what was written when the
    // fsync started is durable once it returns.
    const covered = this.pending.get(path)?.writes.length ?? 0;
    await this.syncLatency();
    const pending = this.pending.get(path);
    if (!pending) return;
    const synced = pending.writes.splice(0, covered);
    for (const w of synced) pending.base = applyWrite(pending.base, w);
    if (pending.writes.length === 0) this.pending.delete(path);
  };

  readonly fsyncDir = async (path: string): Promise<void> => {
    this.tick("fsyncDir", path);
    await this.syncLatency();
    this.renames.delete(path);
    for (const file of [...this.fresh]) {
      if (dirname(file) !== path) continue;
      this.fresh.delete(file);
      this.durableNames.add(file);
    }
  };

  readonly write = async (
    handle: Parameters<FsOps["write"]>[0],
    bytes: Uint8Array,
    position: number,
    path: string,
  ): Promise<void> => {
    this.tick("write", path);
    let pending = this.pending.get(path);
    if (!pending) {
      const base = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
      if (base.length === 0 && !this.durableNames.has(path)) this.fresh.add(path);
      pending = { base, writes: [] };
      this.pending.set(path, pending);
    }
    pending.writes.push({ position, bytes: Buffer.from(bytes) });
    await nodeFsOps.write(handle, bytes, position, path);
  };

  readonly rename = async (from: string, to: string): Promise<void> => {
    this.tick("rename", to);
    const previous = existsSync(to) ? readFileSync(to) : null;
    const dir = dirname(to);
    this.renames.set(dir, [...(this.renames.get(dir) ?? []), { to, previous }]);
    // The target's name is as durable as it was: a lost rename leaves the previous file there, and a
    // target that did not exist (or whose own creation is not durable yet) may vanish.
    this.fresh.delete(from);
    this.durableNames.delete(from);
    if (previous === null) this.fresh.add(to);
    // The file at `to` is replaced: what was unsynced in the old one goes with it; `from`'s follows its name.
    this.pending.delete(to);
    const moved = this.pending.get(from);
    this.pending.delete(from);
    if (moved) this.pending.set(to, moved);
    await nodeFsOps.rename(from, to);
  };

  /** The seam object for `fsStores({ fsOps })`. */
  get fsOps(): FsOps {
    return { fsync: this.fsync, fsyncDir: this.fsyncDir, write: this.write, rename: this.rename };
  }

  /**
   * Rewrites the files as the crash left them; call it once the stores are closed (their close writes
   * nothing: every operation fails). Returns what it did, for failure messages.
   */
  applyCrash(random: () => number, mode: CrashMode): string[] {
    const did: string[] = [];
    // Renames whose directory was never fsync'd may be undone (most recent last, so undo newest first).
    for (const list of this.renames.values()) {
      for (const { to, previous } of [...list].reverse()) {
        if (mode !== "drop" && random() < 0.5) continue;
        if (previous) writeFileSync(to, previous);
        else rmSync(to, { force: true });
        this.pending.delete(to);
        did.push(`undo rename -> ${to}`);
      }
    }
    for (const [path, { base, writes }] of this.pending) {
      if (!existsSync(path)) continue;
      const image = crashImage(base, writes, random, mode);
      writeFileSync(path, image.bytes);
      did.push(`${path}: ${image.what}`);
    }
    for (const path of this.fresh) {
      if (!existsSync(path) || (mode !== "drop" && random() < 0.5)) continue;
      rmSync(path, { force: true });
      did.push(`name lost: ${path}`);
    }
    return did;
  }
}

function applyWrite(image: Buffer, w: { position: number; bytes: Buffer }, length = w.bytes.length): Buffer {
  const end = w.position + length;
  const out = end > image.length ? Buffer.concat([image, Buffer.alloc(end - image.length)]) : Buffer.from(image);
  w.bytes.copy(out, w.position, 0, length);
  return out;
}

function crashImage(
  base: Buffer,
  writes: Pending["writes"],
  random: () => number,
  mode: CrashMode,
): { bytes: Buffer; what: string } {
  const total = writes.reduce((n, w) => n + w.bytes.length, 0);
  const apply = applyWrite;
  if (mode === "drop" || total === 0) return { bytes: base, what: `dropped ${total} unsynced bytes` };
  if (mode === "reorder") {
    let image: Buffer = Buffer.from(base);
    const kept: number[] = [];
    writes.forEach((w, i) => {
      const zeros = { position: w.position, bytes: Buffer.alloc(w.bytes.length) };
      if (random() < 0.5) {
        image = apply(image, w);
        kept.push(i);
      } else image = apply(image, zeros);
    });
    // The size may stop anywhere past the base: the tail of what was allocated.
    const end = base.length + Math.floor(random() * (image.length - base.length + 1));
    return { bytes: image.subarray(0, end), what: `kept writes [${kept.join(",")}] of ${writes.length}, size ${end}` };
  }
  const cut = Math.floor(random() * (total + 1));
  let image: Buffer = Buffer.from(base);
  let left = cut;
  for (const w of writes) {
    if (left <= 0) break;
    const length = Math.min(left, w.bytes.length);
    image = apply(image, w, length);
    left -= length;
  }
  if (mode === "prefix" || image.length === base.length)
    return { bytes: image, what: `kept ${cut} of ${total} unsynced bytes` };
  // garble: the tail of what survived, from some byte past the base to its end, is garbage or zeros
  // (sectors allocated, their data never written); or the size grew over zeros past it.
  const from = base.length + Math.floor(random() * (image.length - base.length));
  const to = image.length;
  const kind = random();
  const garbage =
    kind < 0.4
      ? Buffer.alloc(to - from)
      : Buffer.from(Array.from({ length: to - from }, () => Math.floor(random() * 256)));
  garbage.copy(image, from);
  if (kind > 0.8) image = Buffer.concat([image, Buffer.alloc(1 + Math.floor(random() * 512))]);
  return {
    bytes: image,
    what: `kept ${cut} of ${total} unsynced bytes, garbled [${from}, ${to})${kind > 0.8 ? " and zero-extended" : ""}`,
  };
}
