// Runs (or resumes) the crash agent on fsStores in this process, numbering every write point: each
// fsync, directory fsync, write and rename the fs adapter does (through its fsOps seam) and each side
// effect the tool applies. At write point `crashAt` it prints "crash <k> ..." and blocks every write
// from then on; the parent SIGKILLs it there. Without `crashAt` it runs to the end.
//
// argv[2]: JSON { dir, side, turns, crashAt?, snapshotEvery?, probe? }
// stdout:  "point <k> <op> <path>" before each write point, "ack <records JSON>" once an append is
//          durable, "result <JSON>" and "log <JSON>" at the end, or "error <JSON>".
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { relative } from "node:path";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { fsStores, type FsOps } from "../../../adapters/fs/index.js";
import { nodeFsOps } from "../../../adapters/fs/fsOps.js";
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

let point = 0;
let frozen = false;
/** Numbers a write point; at `crashAt` (and after it) never returns. */
async function writePoint(op: string, path: string): Promise<void> {
  if (frozen) return new Promise(() => undefined);
  point++;
  const where = relative(options.dir, path) || ".";
  if (point === options.crashAt) {
    frozen = true;
    setInterval(() => undefined, 1 << 30); // keeps the process alive, blocked, until the SIGKILL
    out(`crash ${point} ${op} ${where}`);
    return new Promise(() => undefined);
  }
  out(`point ${point} ${op} ${where}`);
}

const fsOps: FsOps = {
  async fsync(handle, path) {
    await writePoint("fsync", path);
    return nodeFsOps.fsync(handle, path);
  },
  async fsyncDir(path) {
    await writePoint("fsyncDir", path);
    return nodeFsOps.fsyncDir(path);
  },
  async write(handle, bytes, position, path) {
    await writePoint("write", path);
    return nodeFsOps.write(handle, bytes, position, path);
  },
  async rename(from, to) {
    await writePoint("rename", to);
    return nodeFsOps.rename(from, to);
  },
};

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
  if ((await stores.events.head(EXECUTION_ID)) === 0) await app.start(loop, { executionId: EXECUTION_ID, input: { prompt: "research barn owls" } });
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
