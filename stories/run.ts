// npm run story <name> [args]: runs one story from stories/: a file (stories/<name>.ts) in this process,
// or a browser story (a folder with a serve.ts, e.g. browser-offline) as its own process, which builds
// the page and serves it until Ctrl-C; its arguments (`--port <n>`) are passed on.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const name = process.argv[2];
const files = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .map((f) => f.slice(0, -3));
const served = readdirSync(here, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(`${here}${e.name}/serve.ts`))
  .map((e) => e.name);
const available = [...files, ...served].sort();
if (!name || !available.includes(name)) {
  console.error(`usage: npm run story <name>\nstories: ${available.join(", ")}`);
  process.exit(name ? 2 : 0);
}
if (served.includes(name)) {
  const child = spawn(process.execPath, ["--import", "tsx", `${here}${name}/serve.ts`, ...process.argv.slice(3)], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await import(pathToFileURL(`${here}${name}.ts`).href);
}
