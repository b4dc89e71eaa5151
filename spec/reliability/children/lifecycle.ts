// Campaign 6's child: on fsStores, either sets up the executions of two subjects ("setup"), or erases
// subject A ("erase"), numbering every write point of the process as children/agent.ts does; at write
// point `crashAt` it prints "crash <k> ..." and blocks until the parent SIGKILLs it.
//
// argv[2]: JSON { dir, mode: "setup" | "erase", crashAt? }
// stdout:  "setup <JSON { outputs, addresses }>", "point <k> <op> <path>", "step <coordinator record type>",
//          "erased <JSON EraseSubjectResult>", or "error <JSON>".
import { ERASE_COORDINATOR_ID_PREFIX } from "../../../actors/constants.js";
import { fsStores } from "../../../adapters/fs/index.js";
import { writePoints } from "./writePoints.js";
import { LIFECYCLE_EXECUTIONS, lifecycleApp, lifecycleLoop, offloadedAddresses, SUBJECT_A } from "../lifecycleWorld.js";
import { eraseSubject } from "../../../lifecycle.js";

const options = JSON.parse(process.argv[2]!) as { dir: string; mode: "setup" | "erase"; crashAt?: number };
const out = (line: string) => process.stdout.write(`${line}\n`);

const { fsOps } = writePoints(options.dir, options.crashAt, out);

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
      if (executionId.startsWith(ERASE_COORDINATOR_ID_PREFIX))
        for (const r of records) out(`step ${r.type}${r.type === "loom.transition" ? ` ${String(r.to)}` : ""}`);
    });
    out(`erased ${JSON.stringify(await eraseSubject(app, SUBJECT_A))}`);
  }
  await app.close();
  await stores.close();
} catch (error) {
  const e = error as { name?: string; code?: string; message?: string };
  out(`error ${JSON.stringify({ name: e.name, code: e.code, message: e.message })}`);
  process.exitCode = 1;
}
