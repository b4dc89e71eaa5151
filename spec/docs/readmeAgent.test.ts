// The README's "An agent in 20 lines", run as it is written (imports pointed at the source, a temp journal
// directory, and compaction forced early): its summarizer must work once compaction triggers.
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("README: an agent in 20 lines", () => {
  it("runs to its answer with compaction triggered, the summarizer answering", async () => {
    const readme = await readFile(join(ROOT, "README.md"), "utf8");
    const block = /## An agent in 20 lines\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const dir = await mkdtemp(join(tmpdir(), "loomwork-readme-"));
    try {
      const code = block!
        .replace(/from "loomwork"/g, `from ${JSON.stringify(join(ROOT, "index.ts"))}`)
        .replace(/from "loomwork\/fs"/g, `from ${JSON.stringify(join(ROOT, "adapters/fs/index.ts"))}`)
        .replace('dir: ".loomwork"', `dir: ${JSON.stringify(join(dir, "journal"))}`)
        .replace("afterBytes: 65_536", "afterBytes: 200");
      expect(code).toContain("afterBytes: 200");
      const file = join(dir, "readme-agent.mts");
      await writeFile(
        file,
        `${code}\nconsole.log("log", JSON.stringify((await app.log("run-1")).map((r) => r.stepId).filter(Boolean)));\n`,
      );
      const run = spawnSync(process.execPath, ["--import", "tsx", file], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(run.stderr).toBe("");
      expect(run.stdout).toContain("Barn owls hunt by ear.");
      expect(run.stdout).toMatch(/researcher#turn:1:compact/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
