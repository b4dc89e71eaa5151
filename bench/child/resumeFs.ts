// A fresh process resumes the interrupted execution from an fs journal: open the directory (recovery,
// writer lock), rebuild from the latest snapshot, replay the tail, re-start the stalled call.
import { fsStores } from "../../adapters/fs/index.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ID, resumeInterrupted, runInterrupted } from "../agent.js";
import { span } from "../measure.js";
import { report } from "../spawn.js";

const { dir, turns, warm } = JSON.parse(process.argv[2]!) as { dir: string; turns: number; warm?: boolean };
// `warm`: the runtime's code run once before the span (a 20-turn run interrupted and resumed on the memory
// store, untimed), so the span times the same resume with that code compiled: what cold code costs.
if (warm) {
  const memory = memoryStores();
  await runInterrupted(memory, 20);
  await (await resumeInterrupted(memory, 20)).app.close();
}
const end = span();
const stores = await fsStores({ dir });
const opened = end().wall;
const { app, reached } = await resumeInterrupted(stores, turns);
const resumed = end();
await reached;
// Until the stalled call runs again: the figure compared with LangGraph's resume, which is timed the same way.
const toTool = end();
const replay = (await app.resume(EXECUTION_ID)).replay;
await app.close();
await stores.close();
report({
  ms: resumed.wall,
  cpuMs: resumed.cpu,
  toToolMs: toTool.wall,
  toToolCpuMs: toTool.cpu,
  openMs: opened,
  replay,
});
