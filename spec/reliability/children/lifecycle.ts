// Campaign 6's child: on fsStores, either sets up the executions of two subjects ("setup"), or erases
// subject A ("erase"), numbering every write point of the process as children/agent.ts does; at write
// point `crashAt` it prints "crash <k> ..." and blocks until the parent SIGKILLs it.
//
// argv[2]: JSON { dir, mode: "setup" | "erase", crashAt? }
// stdout:  "setup <JSON { outputs, addresses }>", "point <k> <op> <path>", "step <coordinator record type>",
//          "erased <JSON EraseSubjectResult>", or "error <JSON>".
import { relative } from "node:path";
import { fsStores, type FsOps } from "../../../adapters/fs/index.js";
import { nodeFsOps } from "../../../adapters/fs/fsOps.js";
import { LIFECYCLE_EXECUTIONS, lifecycleApp, lifecycleLoop, offloadedAddresses, SUBJECT_A } from "../lifecycleWorld.js";

const options = JSON.parse(process.argv[2]!) as { dir: string; mode: "setup" | "erase"; crashAt?: number };
const out = (line: string) => process.stdout.write(`${line}\n`);

let point = 0;
let frozen = false;
async function writePoint(op: string, path: string): Promise<void> {
  if (frozen) return new Promise(() => undefined);
  point++;
  const where = relative(options.dir, path) || ".";
  if (point === options.crashAt) {
    frozen = true;
    setInterval(() => undefined, 1 << 30);
    out(`crash ${point} ${op} ${where}`);
    return new Promise(() => undefined);
  }
  out(`point ${point} ${op} ${where}`);
}

const fsOps: FsOps = {
  fsync: async (handle, path) => (await writePoint("fsync", path), nodeFsOps.fsync(handle, path)),
  fsyncDir: async (path) => (await writePoint("fsyncDir", path), nodeFsOps.fsyncDir(path)),
  write: async (handle, bytes, position, path) => (await writePoint("write", path), nodeFsOps.write(handle, bytes, position, path)),
  rename: async (from, to) => (await writePoint("rename", to), nodeFsOps.rename(from, to)),
};

try {
  const stores = await fsStores({ dir: options.dir, fsOps });
  const app = lifecycleApp(stores);
  if (options.mode === "setup") {
    const outputs: Record<string, unknown> = {};
    const addresses: Record<string, string[]> = {};
    for (const { executionId, subject } of LIFECYCLE_EXECUTIONS) {
      await app.start(lifecycleLoop, { executionId, subject, input: { prompt: `work for ${subject}` } });
      outputs[executionId] = await app.result(executionId);
      addresses[executionId] = offloadedAddresses(await app.log(executionId));
    }
    out(`setup ${JSON.stringify({ outputs, addresses })}`);
  } else {
    app.on("append", ({ executionId, records }) => {
      if (executionId.startsWith("loom.erase:")) for (const r of records) out(`step ${r.type}${r.type === "loom.transition" ? ` ${String(r.to)}` : ""}`);
    });
    out(`erased ${JSON.stringify(await app.eraseSubject(SUBJECT_A))}`);
  }
  await app.close();
  await stores.close();
} catch (error) {
  const e = error as { name?: string; code?: string; message?: string };
  out(`error ${JSON.stringify({ name: e.name, code: e.code, message: e.message })}`);
  process.exitCode = 1;
}
