// npm run story <name>: runs one story from stories/.
import { readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";

const name = process.argv[2];
const available = readdirSync(new URL(".", import.meta.url)).filter((f) => f.endsWith(".ts") && f !== "run.ts").map((f) => f.slice(0, -3));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run story <name>\nstories: ${available.join(", ")}`);
  process.exit(name ? 2 : 0);
}
await import(pathToFileURL(new URL(`./${name}.ts`, import.meta.url).pathname).href);
