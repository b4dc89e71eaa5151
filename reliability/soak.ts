// `npm run soak`: the reliability campaigns of spec/reliability/ (and campaign 10, the golden journals'
// replay, in spec/upgrades/) with their larger (soak) counts.
//
//   npm run soak                                  every campaign
//   npm run soak -- simulation lostWrites         the campaigns whose file names match
//   npm run soak -- --seed 182 simulation         one seed of the seeded campaigns (4, 2, 7, 1's double crashes)
//
// Counts come from spec/reliability/support.ts `cases(NAME, ci, soak)`; LOOMWORK_<NAME>=<n> overrides one.
// See docs/reliability.md for what each campaign injects and what must hold.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const args = process.argv.slice(2);
const env: NodeJS.ProcessEnv = { ...process.env, LOOMWORK_SOAK: "1" };
const filters: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--seed") env.LOOMWORK_SEED = args[++i];
  else filters.push(args[i]!);
}
const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
const targets =
  filters.length > 0
    ? filters.map((f) => `spec/reliability/${f.replace(/\.test\.ts$/, "")}`)
    : ["spec/reliability/", "spec/upgrades/goldenReplay.test.ts"];
const started = Date.now();
const child = spawn(process.execPath, ["--max-old-space-size=4096", vitest, "run", ...targets], {
  stdio: "inherit",
  env,
});
child.on("exit", (code, signal) => {
  console.log(
    `soak: ${targets.join(" ")} finished in ${Math.round((Date.now() - started) / 1000)} s (${signal ?? `exit ${code}`})`,
  );
  process.exit(code ?? 1);
});
