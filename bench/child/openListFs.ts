// A fresh process opens an fs directory and lists its executions (variant "open"), or reads its catalogue
// checkpoint bare (variant "catalogue": readFile + JSON.parse of the payload, no checksum), or times the
// phases of the open one by one (variant "phases").
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { FsDirectory } from "../../adapters/fs/directory.js";
import { nodeFsOps } from "../../adapters/fs/fsOps.js";
import { fsStores } from "../../adapters/fs/index.js";
import { loadCheckpoint, recoverExecutions } from "../../adapters/fs/recovery.js";
import { span } from "../measure.js";
import { report } from "../spawn.js";

const { dir, variant } = JSON.parse(process.argv[2]!) as { dir: string; variant: "open" | "catalogue" | "phases" };

if (variant === "catalogue") {
  const end = span();
  const bytes = await readFile(join(dir, "catalogue.ckpt"));
  const value = JSON.parse(bytes.toString("utf8", 8, 8 + bytes.readUInt32LE(0))) as { entries: unknown[] };
  const { wall, cpu } = end();
  report({ ms: wall, cpuMs: cpu, executions: value.entries.length, bytes: bytes.length });
} else if (variant === "open") {
  const end = span();
  const stores = await fsStores({ dir });
  const listed = await stores.events.listExecutions();
  const { wall, cpu } = end();
  await stores.close();
  report({ ms: wall, cpuMs: cpu, executions: listed.length });
} else {
  const phases: Record<string, number> = {};
  let t = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    phases[name] = now - t;
    t = now;
  };
  const names = await readdir(join(dir, "executions"));
  lap("readdir of executions/ (a trusted open lists it too: folders the checkpoint does not know)");
  await loadCheckpoint(dir);
  lap("catalogue checkpoint: read, checksum, parse (loadCheckpoint)");
  const trusted = await recoverExecutions(new FsDirectory(dir, nodeFsOps, true), true);
  lap("trusted open alone (read-only: the checkpoint, the dirty marker; no log touched)");
  const recovered = await recoverExecutions(new FsDirectory(dir, nodeFsOps, true));
  lap("full recovery, for scale (read-only, as after a crash or with verifyAtOpen: a stat and a header read per log)");
  if (trusted.deferred.size + trusted.executions.length !== recovered.executions.length)
    throw new Error("the trusted open and the full recovery disagree");
  const stores = await fsStores({ dir });
  lap("fsStores (lock, leftovers, recovery, content and key stores)");
  await stores.events.listExecutions();
  lap("listExecutions (a copy of each entry, sorted)");
  await stores.close();
  report({ ms: 0, phases, executions: names.length, recovered: recovered.executions.length });
}
