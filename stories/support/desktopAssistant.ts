// The desktop story's agent: digests a local folder (list it, read every file, answer). Its model is
// scriptedModel with computed replies: each reply is derived from the request, as a real model's would be.
import {
  agentLoop$,
  createLlmEffect,
  createToolEffect,
  scriptedModel,
  type Effect,
  type Message,
  type ModelReply,
  type ModelRequest,
} from "../../index.js";
import { latency } from "./researchAgent.js";

/** The user's files, as the app would read them from disk. */
export const FOLDERS: Record<string, { name: string; text: string }[]> = {
  inbox: [
    { name: "ana.eml", text: "From: Ana\nSubject: Offsite moved to Thursday\nThe venue could not do Wednesday." },
    { name: "billing.eml", text: "From: Billing\nSubject: Invoice 2291 is due on the 5th\nPay by card or transfer." },
    { name: "tom.eml", text: "From: Tom\nSubject: Draft of the Q4 plan attached\nComments by Friday, please." },
  ],
  notes: [
    { name: "groceries.md", text: "Subject: Groceries\noat milk, lemons, rye bread" },
    { name: "ideas.md", text: "Subject: Talk ideas\njournaled actors; resuming agents offline" },
  ],
};

export const desktopAssistant = agentLoop$({
  id: "assistant",
  model: "model",
  system: "You digest a folder of the user's files: list it, read every file, then answer with one line per file.",
  tools: [
    { name: "listFolder", description: "{ folder } -> file names" },
    { name: "readFile", description: "{ folder, name } -> the file's text" },
  ],
  maxTurns: 6,
});

const toolResults = (messages: Message[]) => messages.filter((m) => m.role === "tool");

/** Replies computed from the request: list the folder, read what it holds, then write the digest. */
export function assistantReply(request: ModelRequest, call: number): ModelReply {
  const prompt = String(request.messages.find((m) => m.role === "user")?.content ?? "");
  const folder = /\b(inbox|notes)\b/.exec(prompt)?.[1] ?? "inbox";
  const usage = { inputTokens: 120 + 180 * call, outputTokens: 24 };
  if (call === 0) return { toolCalls: [{ toolName: "listFolder", input: { folder } }], usage };
  if (call === 1) {
    const names = toolResults(request.messages).at(-1)?.content as string[];
    return { toolCalls: names.map((name) => ({ toolName: "readFile", input: { folder, name } })), usage };
  }
  const lines = toolResults(request.messages)
    .slice(1)
    .map((m) => {
      const text = String(m.content);
      const from = /^From: (.*)$/m.exec(text)?.[1];
      return `• ${/^Subject: (.*)$/m.exec(text)?.[1] ?? text.split("\n")[0]}${from ? ` (${from})` : ""}`;
    });
  return { text: `${folder[0]!.toUpperCase()}${folder.slice(1)}: ${lines.length} items\n${lines.join("\n")}`, usage };
}

export function desktopEffects(options: { modelMs?: number; toolMs?: number } = {}): Record<string, Effect> {
  const { modelMs = 100, toolMs = 150 } = options;
  const llm = createLlmEffect(scriptedModel(assistantReply));
  return {
    model: { ...llm, run: async (request, ctx) => (await latency(modelMs, ctx.signal), llm.run(request, ctx)) },
    listFolder: createToolEffect(async ({ folder }: { folder: string }, ctx) => {
      await latency(toolMs, ctx.signal);
      return (FOLDERS[folder] ?? []).map((f) => f.name);
    }),
    readFile: createToolEffect(async ({ folder, name }: { folder: string; name: string }, ctx) => {
      await latency(toolMs, ctx.signal);
      return FOLDERS[folder]?.find((f) => f.name === name)?.text ?? `no such file: ${folder}/${name}`;
    }),
  };
}
