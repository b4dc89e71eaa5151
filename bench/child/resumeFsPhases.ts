// The phases of a resume from fs, in a fresh process as a real resume is (cold code), timed one by one:
// open the directory, then what Execution.recover does. The CRC-32 of the log is timed last, warm.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import zlib from "node:zlib";
import { fsStores } from "../../adapters/fs/index.js";
import { crc32Js } from "../../adapters/fs/framing.js";
import { EXECUTION_ID } from "../agent.js";
import { phasesOnce } from "../resumeBreakdown.js";
import { report } from "../spawn.js";

const { dir, turns } = JSON.parse(process.argv[2]!) as { dir: string; turns: number };
const start = performance.now();
const stores = await fsStores({ dir });
const open = performance.now() - start;
const { phases, macrosteps, turnsReplayed } = await phasesOnce(
  stores,
  turns,
  "fs: read the file, check its CRC-32, JSON.parse",
);
const ms = performance.now() - start;
const info = await stores.events.getExecution(EXECUTION_ID);
await stores.close();
const [name] = await readdir(join(dir, "executions"));
const log = await readFile(join(dir, "executions", name!, "log"));
const t = performance.now();
crc32Js(log);
const crc = performance.now() - t;
const u = performance.now();
zlib.crc32(log);
const nativeCrc = performance.now() - u;
report({
  ms,
  phases: {
    "open the directory (fsStores: recovery, writer lock)": open,
    ...phases,
    "for scale: CRC-32 of the whole log by the adapter's JS (warm)": crc,
    "for scale: the same by node:zlib crc32 (native)": nativeCrc,
  },
  macrosteps,
  turnsReplayed,
  head: info?.head,
});
