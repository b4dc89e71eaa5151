// Temporary directories for tests and benchmarks: each made under the OS temp dir with a label, all
// removed by one call at the end (afterAll, or the bench's teardown).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A set of temporary directories named `loomwork-<prefix>-<label>-*`. */
export function tempDirs(prefix: string): { tempDir(label: string): Promise<string>; removeTempDirs(): Promise<void> } {
  const made: string[] = [];
  return {
    async tempDir(label) {
      const dir = await mkdtemp(join(tmpdir(), `loomwork-${prefix}-${label}-`));
      made.push(dir);
      return dir;
    },
    async removeTempDirs() {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}
