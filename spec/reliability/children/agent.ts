// Runs (or resumes) the crash agent on fsStores in this process, numbering every write point: each
// fsync, directory fsync, write and rename the fs adapter does (through its fsOps seam) and each side
// effect the tool applies. At write point `crashAt` it prints "crash <k> ..." and blocks every write
// from then on; the parent SIGKILLs it there. Without `crashAt` it runs to the end.
//
// argv[2]: JSON { dir, side, turns, crashAt?, snapshotEvery?, probe? }
// stdout:  "point <k> <op> <path>" before each write point, "ack <records JSON>" once an append is
//          durable, "result <JSON>" and "log <JSON>" at the end, or "error <JSON>".
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { fsStores } from "../../../adapters/fs/index.js";
import { writePoints } from "./writePoints.js";
import { crashAgent, crashAgentEffects, EXECUTION_ID } from "../support.js";

interface Options {
  dir: string;
  side: string;
  turns: number;
  crashAt?: number;
  snapshotEvery?: number;
  /** Only try to open the directory; print "open <JSON outcome>" and exit. */
  probe?: boolean;
}

const options = JSON.parse(process.argv[2]!) as Options;
const out = (line: string) => process.stdout.write(`${line}\n`);

if (options.probe) {
  const t0 = performance.now();
  try {
    const stores = await fsStores({ dir: options.dir });
    await stores.close();
    out(`open ${JSON.stringify({ ok: true })}`);
  } catch (error) {
    const { name, code, resource } = error as { name?: string; code?: string; resource?: string };
    out(`open ${JSON.stringify({ ok: false, name, code, resource, ms: performance.now() - t0 })}`);
  }
  process.exit(0);
}

const { writePoint, fsOps } = writePoints(options.dir, options.crashAt, out);

async function sideEffect(key: string, turn: number): Promise<void> {
  await writePoint("side", options.side);
  const fd = openSync(options.side, "a");
  try {
    writeSync(fd, `${key}\t${turn}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

try {
  const stores = await fsStores({ dir: options.dir, fsOps });
  const loop = crashAgent(options.turns);
  const app = createApp(
    defineConfig({
      stores,
      effects: crashAgentEffects(options.turns, sideEffect),
      logics: [loop],
      execution: { snapshotEvery: options.snapshotEvery ?? 6 },
    }),
  );
  app.on("append", ({ records }) => out(`ack ${JSON.stringify(records)}`));
  if ((await stores.events.head(EXECUTION_ID)) === 0)
    await app.start(loop, { executionId: EXECUTION_ID, input: { prompt: "research barn owls" } });
  else await app.resume(EXECUTION_ID);
  const result = await app.result(EXECUTION_ID);
  out(`result ${JSON.stringify(result)}`);
  out(`log ${JSON.stringify(await app.log(EXECUTION_ID))}`);
  await app.close();
  await stores.close();
  out("closed {}");
} catch (error) {
  const e = error as { name?: string; code?: string; message?: string };
  out(`error ${JSON.stringify({ name: e.name, code: e.code, message: e.message })}`);
  process.exitCode = 1;
}
