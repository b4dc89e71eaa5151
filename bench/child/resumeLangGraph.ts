// A fresh process resumes the interrupted LangGraph thread from its SQLite checkpointer: open the file,
// compile the graph, invoke(null) from the latest checkpoint; timed until the stalled tool runs again.
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { buildGraph, invokeArgs, type LangGraphState } from "../langgraphAgent.js";
import { stallTurn } from "../agent.js";
import { span } from "../measure.js";
import { report } from "../spawn.js";

const { file, turns, state } = JSON.parse(process.argv[2]!) as { file: string; turns: number; state: LangGraphState };
const end = span();
const checkpointer = SqliteSaver.fromConnString(file);
let reach!: () => void;
const reached = new Promise<void>((resolve) => (reach = resolve));
const graph = buildGraph({ turns, state, checkpointer, stallAt: { turn: stallTurn(turns), reached: reach } });
const abort = new AbortController();
const { config } = invokeArgs(turns, abort.signal);
const run = graph.invoke(null, config).catch(() => undefined);
await reached;
const { wall, cpu } = end();
abort.abort();
await run;
report({ ms: wall, cpuMs: cpu });
