// The crash children's write points: every fsync, directory fsync, write and rename the fs adapter does
// (through its fsOps seam) is numbered and printed as "point <k> <op> <path>"; at `crashAt` the child
// prints "crash <k> ..." and blocks every write from then on, until the parent SIGKILLs it.
import { relative } from "node:path";
import type { FsOps } from "../../../adapters/fs/index.js";
import { nodeFsOps } from "../../../adapters/fs/fsOps.js";

export function writePoints(dir: string, crashAt: number | undefined, out: (line: string) => void) {
  let point = 0;
  let frozen = false;
  /** Numbers a write point; at `crashAt` (and after it) never returns. */
  async function writePoint(op: string, path: string): Promise<void> {
    if (frozen) return new Promise(() => undefined);
    point++;
    const where = relative(dir, path) || ".";
    if (point === crashAt) {
      frozen = true;
      setInterval(() => undefined, 1 << 30); // keeps the process alive, blocked, until the SIGKILL
      out(`crash ${point} ${op} ${where}`);
      return new Promise(() => undefined);
    }
    out(`point ${point} ${op} ${where}`);
  }
  const fsOps: FsOps = {
    fsync: async (handle, path) => (await writePoint("fsync", path), nodeFsOps.fsync(handle, path)),
    fsyncDir: async (path) => (await writePoint("fsyncDir", path), nodeFsOps.fsyncDir(path)),
    write: async (handle, bytes, position, path) => (
      await writePoint("write", path),
      nodeFsOps.write(handle, bytes, position, path)
    ),
    rename: async (from, to) => (await writePoint("rename", to), nodeFsOps.rename(from, to)),
  };
  return { writePoint, fsOps };
}
