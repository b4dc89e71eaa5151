// Group commit: one fsync round at a time; everything written while a round is in flight is made
// durable by the next round, which fsyncs each file (and directory) it covers once, however many
// appends wrote to it. Writes to one log are coalesced the same way (LogAppender).
import type { FileHandle } from "node:fs/promises";
import type { FsDirectory } from "./directory.js";

export type SyncTarget = { handle: FileHandle; path: string } | { dir: string };

interface Round {
  files: Map<FileHandle, string>;
  dirs: Set<string>;
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

export class GroupCommit {
  private next: Round | undefined;
  private running = false;

  constructor(private readonly directory: FsDirectory) {}

  /**
   * Resolves once every target is durable. Call it after the bytes are written: the round that
   * covers them starts after this call, never before, so a resolved promise means fsync'd bytes.
   */
  sync(targets: SyncTarget[]): Promise<void> {
    if (!this.next) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.next = { files: new Map(), dirs: new Set(), done, resolve, reject };
    }
    for (const target of targets) {
      if ("dir" in target) this.next.dirs.add(target.dir);
      else this.next.files.set(target.handle, target.path);
    }
    const { done } = this.next;
    if (!this.running) {
      this.running = true;
      void this.drain();
    }
    return done;
  }

  private async drain(): Promise<void> {
    while (this.next) {
      const round = this.next;
      this.next = undefined;
      // A round queued before the writer failed must not be acknowledged by a later, lucky fsync.
      const failure = this.directory.failure;
      if (failure) {
        round.reject(failure);
        continue;
      }
      try {
        const { ops } = this.directory;
        await Promise.all([
          ...[...round.files].map(([handle, path]) => ops.fsync(handle, path)),
          ...[...round.dirs].map((dir) => ops.fsyncDir(dir)),
        ]);
        // Nor by one that was in flight when the writer failed: the writer stops as a whole at its first I/O
        // error (what this round made durable a reopen finds; the caller is told the write may not have landed).
        const late = this.directory.failure;
        if (late) round.reject(late);
        else round.resolve();
      } catch (error) {
        round.reject(this.directory.fail(error));
      }
    }
    this.running = false;
  }
}

interface PendingWrite {
  bytes: Uint8Array;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The open log of one execution, with its writes coalesced: while one write is in flight, later
 * appends queue up and go out together in the next write, so a burst costs few syscalls as well
 * as few fsyncs. Writes land in call order at contiguous positions from `size`.
 */
export class LogAppender {
  private queue: PendingWrite[] = [];
  private flushing = false;

  constructor(
    private readonly directory: FsDirectory,
    readonly handle: FileHandle,
    readonly path: string,
    private size: number,
  ) {}

  /** Resolves once `bytes` are written (not yet durable) after everything queued before them. */
  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((w) => w.bytes));
      try {
        await this.directory.ops.write(this.handle, bytes, this.size, this.path);
        this.size += bytes.length;
        for (const w of batch) w.resolve();
      } catch (error) {
        // The file's end is unknown now: nothing more may be written to it. The writer fails at once, before
        // any waiter hears of it, so no fsync round ending after this acknowledges anything.
        this.directory.fail(error);
        for (const w of [...batch, ...this.queue.splice(0)]) w.reject(error);
      }
    }
    this.flushing = false;
  }
}
