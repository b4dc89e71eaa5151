// A fresh process resumes the interrupted execution from an fs journal: open the directory (recovery,
// writer lock), rebuild from the latest snapshot, replay the tail, re-start the stalled call.
import { fsStores } from "../../adapters/fs/index.js";
import { EXECUTION_ID, resumeInterrupted } from "../agent.js";
import { span } from "../measure.js";
import { report } from "../spawn.js";

const { dir, turns } = JSON.parse(process.argv[2]!) as { dir: string; turns: number };
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
report({ ms: resumed.wall, cpuMs: resumed.cpu, toToolMs: toTool.wall, toToolCpuMs: toTool.cpu, openMs: opened, replay });
