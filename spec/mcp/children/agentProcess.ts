// A process that runs (or resumes) an agent on fsStores whose tools are the owls MCP server's (stdio).
// The list is pinned: the first boot lists the server's tools and saves `list` beside the stores; a resume
// passes it back as `options.tools`, so it never lists again.
//
// argv[2]: JSON { dir, log, hold?, mode: "start" | "resume" }
// stdout:  "step <stepId>" per tool step recorded, "result <JSON>" at the end.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentLoop$ } from "../../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../../actors/agents/model.js";
import { createApp } from "../../../actors/app.js";
import { defineConfig } from "../../../actors/config.js";
import { fsStores } from "../../../adapters/fs/index.js";
import { scriptedModel } from "../../../adapters/scripted/index.js";
import { mcpTools, type McpToolList } from "../../../mcp.js";

const options = JSON.parse(process.argv[2]!) as { dir: string; log: string; hold?: string; mode: "start" | "resume" };
const out = (line: string) => process.stdout.write(`${line}\n`);
const SERVER = fileURLToPath(new URL("../servers/owls.ts", import.meta.url));
const listFile = join(options.dir, "owls-tools.json");

const pinned = existsSync(listFile) ? (JSON.parse(await readFile(listFile, "utf8")) as McpToolList) : undefined;
const owls = await mcpTools(
  {
    name: "owls",
    command: process.execPath,
    args: ["--import", "tsx", SERVER],
    env: { OWLS_LOG: options.log, ...(options.hold ? { OWLS_HOLD: options.hold } : {}) },
  },
  pinned ? { tools: pinned } : {},
);
if (!pinned) await writeFile(listFile, JSON.stringify(owls.list));

const model = scriptedModel([
  { toolCalls: [{ toolName: "owls_search", input: { q: "barn owl" } }] },
  { toolCalls: [{ toolName: "owls_measure", input: { bird: "barn owl" } }] },
  { text: "Barn owls hunt by sound; 95 cm." },
]);
const stores = await fsStores({ dir: options.dir });
const app = createApp(defineConfig({ stores, effects: { model: createLlmEffect(model), ...owls.effects } }));
app.on("step", (event: { stepId?: string }) => {
  if (event.stepId?.includes(":tool:")) out(`step ${event.stepId}`);
});
const loop = agentLoop$({ id: "owl", model: "model", tools: owls.names });
if (options.mode === "start") await app.start(loop, { executionId: "run", input: { prompt: "Barn owls?" } });
else await app.resume("run", loop);
out(`result ${JSON.stringify(await app.result("run"))}`);
await app.close();
await owls.close();
