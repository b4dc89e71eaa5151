// loomwork run <story>: runs one of the repository's stories (stories/*.ts) with the journal in --dir.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { command } from "../context.js";
import { NotFoundError } from "../errors.js";

/** The stories folder of the checkout: next to cli/ when run from source, two levels up from dist/cli/. */
function storiesDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, "..", "..", "stories"), join(here, "..", "..", "..", "stories")].find((d) =>
    existsSync(join(d, "run.ts")),
  );
}

export function listStories(dir = storiesDir()): string[] {
  if (!dir) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".ts") && f !== "run.ts")
    .map((f) => f.slice(0, -3))
    .sort();
}

/**
 * The commands the main help lists, in order: `run` heads them where stories are found (a checkout of the
 * repository); where none are (the npm package ships none) it is left out, as it could only say so.
 */
export function helpCommands<T extends { spec: { name: string } }>(commands: T[], stories = listStories()): T[] {
  return stories.length ? commands : commands.filter((c) => c.spec.name !== "run");
}

export const run = command(
  "run",
  "Run a story from stories/ (a runnable end-to-end scenario) with its journal in --dir.",
  {
    args: { "[story]": "the story's name, e.g. research-agent (none: list them)" },
    details: [
      "The story runs as its own process (node --import tsx stories/<story>.ts) with LOOMWORK_DIR set to --dir, so " +
        "`loomwork ls` and `loomwork log` show what it journaled (stories on memory stores journal nothing there). " +
        "Stories ship with the repository, not with the npm package. The exit code is the story's.",
      "A story never deletes data it did not create: one that starts from an empty directory (erase-and-export) " +
        "refuses a non-empty --dir it did not make (LOOM_STORY_DIR_NOT_OWNED, exit code 2 passed on as 1) and leaves it " +
        "untouched; the others write their executions beside what --dir holds.",
    ],
    examples: [
      "loomwork run",
      "loomwork run research-agent",
      "loomwork run research-agent --dir /tmp/journal && loomwork ls --dir /tmp/journal",
    ],
  },
  async (ctx) => {
    const dir = storiesDir();
    const stories = listStories(dir);
    const name = ctx.positionals[0];
    if (!name) {
      if (ctx.json) return ctx.printJson({ stories });
      ctx.out(`stories: ${stories.join(", ") || "(none found: run the CLI from a checkout of the repository)"}`);
      return;
    }
    if (!dir || !stories.includes(name)) {
      throw new NotFoundError(
        `no story "${name}"`,
        stories.length
          ? `Stories: ${stories.join(", ")}.`
          : "Stories ship with the repository: run the CLI from a checkout.",
      );
    }
    const root = dirname(dir);
    const child = spawn(process.execPath, ["--import", "tsx", join(dir, `${name}.ts`)], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, LOOMWORK_DIR: ctx.dir },
    });
    const code = await new Promise<number>((resolve) =>
      child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))),
    );
    return code === 0 ? 0 : 1;
  },
);
