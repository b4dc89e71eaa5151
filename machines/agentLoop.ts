// The agent loop as a pure XState machine: model call -> tool calls -> next turn, until the model answers
// without tool calls or maxTurns. Paste the machine agentLoop$ builds into the Stately visualizer to see it.
import { assign, enqueueActions, setup } from "xstate";
import { effectActor, stepInput } from "./helpers/effectActor.js";
import { invokeAs } from "./helpers/invokeAs.js";
import type { Message, ModelReply, ModelRequest, ToolCall } from "./helpers/messages.js";
import { fencedMessages, isTainted, taintOrigins, tainted } from "./helpers/taint.js";

/** Origin of a summary that folded tainted content: it stays tainted (ADR 0137 D2). */
export const SUMMARY_ORIGIN = "agent:summary";

export interface AgentLoopMachineConfig {
  id: string;
  model: string;
  tools: { name: string; description?: string }[];
  system?: string;
  maxTurns: number;
  maxTokens?: number;
  compaction?: { toolId: string; afterBytes: number };
}

/** An agent loop's input: a prompt, or a whole transcript. */
export type AgentLoopInput = { prompt: string } | { messages: Message[] };

/** An agent loop's output: the final text, turns, transcript bytes and taint origins seen. */
export interface AgentLoopOutput {
  text: string;
  turns: number;
  transcriptBytes: number;
  sawTaintFrom: string[];
}

/** The agent loop machine's context: the transcript and the turn in progress. */
export interface AgentLoopContext {
  /** Index of the turn in progress: its steps are `turn:<turn>:model`, `turn:<turn>:tool:<j>`, `turn:<turn>:compact`. */
  turn: number;
  messages: Message[];
  /** Running UTF-8 byte count of the transcript's JSON, kept per message (never re-serialized whole). */
  transcriptBytes: number;
  calls: ToolCall[];
  results: (Message | null)[];
  sawTaintFrom: string[];
  text: string;
  compactions: number;
}

/** Thrown (and journaled as the run's error) when a model or summary result comes back as a claim-check envelope. */
export const ENVELOPE_IN_MODEL_TURN =
  "came back as a claim-check envelope: execution.claimCheck.toolIds must list only tools, never the model or the summarizer effect (ADR 0140 D2/D9)";

const encoder = new TextEncoder();
export const messageBytes = (message: Message): number => encoder.encode(JSON.stringify(message)).length;
const bytesOf = (messages: Message[]) => messages.reduce((n, m) => n + messageBytes(m), 0);
const isEnvelope = (value: unknown): boolean =>
  typeof value === "object" && value !== null && ("__loomClaimCheck" in value || (isTainted(value) && isEnvelope(value.value)));

/** Splits the transcript for compaction: the system prompt, what to fold, and the newest turn kept verbatim. */
export function compactionSplit(messages: Message[]): { system: Message[]; fold: Message[]; keep: Message[] } {
  const system = messages[0]?.role === "system" ? [messages[0]] : [];
  const rest = messages.slice(system.length);
  let lastAssistant = -1;
  for (let i = rest.length - 1; i >= 0; i--) {
    if (rest[i]!.role === "assistant") {
      lastAssistant = i;
      break;
    }
  }
  const cut = lastAssistant >= 0 ? lastAssistant : Math.max(0, rest.length - 1);
  return { system, fold: rest.slice(0, cut), keep: rest.slice(cut) };
}

/** Builds the agent loop machine for one configuration. Pure: every I/O is a named effect. */
export function createAgentLoopMachine(config: AgentLoopMachineConfig) {
  const toolNames = new Set(config.tools.map((t) => t.name));
  // Every effect the loop may invoke, declared by name (the runtime supplies them); the loop reads
  // their outputs as ModelReply, tool results and { summary } in its actions.
  const actors: Record<string, ReturnType<typeof effectActor>> = { [config.model]: effectActor() };
  for (const tool of toolNames) actors[tool] = effectActor();
  if (config.compaction) actors[config.compaction.toolId] = effectActor();

  const request = (context: AgentLoopContext): ModelRequest => ({
    messages: fencedMessages(context.messages),
    tools: config.tools,
    ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
  });

  const shouldCompact = (context: AgentLoopContext) =>
    config.compaction !== undefined &&
    context.transcriptBytes > config.compaction.afterBytes &&
    compactionSplit(context.messages).fold.length > 0;


  return setup({
    types: {} as { context: AgentLoopContext; input: AgentLoopInput; output: AgentLoopOutput; events: { type: string; output?: unknown; error?: unknown; actorId?: string } },
    actors,
  }).createMachine({
    id: config.id,
    context: ({ input }) => {
      const valid = typeof input === "object" && input !== null && ("messages" in input ? Array.isArray(input.messages) : typeof (input as { prompt?: unknown }).prompt === "string");
      if (!valid) throw new TypeError(`agentLoop$ "${config.id}" input: { prompt: string } or { messages: Message[] }; got ${JSON.stringify(input) ?? String(input)}.`);
      const given = "messages" in input ? input.messages : [{ role: "user" as const, content: input.prompt }];
      const messages: Message[] = [...(config.system && given[0]?.role !== "system" ? [{ role: "system" as const, content: config.system }] : []), ...given];
      return { turn: 0, messages, transcriptBytes: bytesOf(messages), calls: [], results: [], sawTaintFrom: taintOrigins(messages), text: "", compactions: 0 };
    },
    initial: "deciding",
    states: {
      deciding: {
        always: [{ guard: ({ context }) => shouldCompact(context), target: "compacting" }, { target: "thinking" }],
      },
      compacting: {
        invoke: {
          // Without compaction this state is never entered; naming the model keeps every src a registered effect.
          src: config.compaction?.toolId ?? config.model,
          id: "compact",
          input: ({ context }) => stepInput(`turn:${context.turn}:compact`, { messages: compactionSplit(context.messages).fold }),
          onDone: {
            target: "thinking",
            actions: assign(({ context, event }) => {
              const result = event.output as { summary?: unknown };
              if (isEnvelope(result)) throw new TypeError(`The compaction summary ${ENVELOPE_IN_MODEL_TURN}.`);
              const { system, fold, keep } = compactionSplit(context.messages);
              const origins = taintOrigins(fold);
              const text = `Summary of the conversation so far:\n${String(result?.summary ?? "")}`;
              const summary: Message = { role: "user", content: origins.length ? tainted(text, SUMMARY_ORIGIN) : text };
              const messages = [...system, summary, ...keep];
              return { messages, transcriptBytes: bytesOf(messages), compactions: context.compactions + 1 };
            }),
          },
        },
      },
      thinking: {
        invoke: {
          src: config.model,
          id: "model",
          input: ({ context }) => stepInput(`turn:${context.turn}:model`, request(context)),
          onDone: {
            target: "routing",
            actions: assign(({ context, event }) => {
              const reply = (event.output ?? {}) as ModelReply;
              if (isEnvelope(reply)) throw new TypeError(`The model turn ${ENVELOPE_IN_MODEL_TURN}.`);
              const calls: ToolCall[] = (reply.toolCalls ?? []).map((c, j) => ({ id: `call_${context.turn}_${j}`, toolName: c.toolName, input: c.input ?? {} }));
              const message: Message = { role: "assistant", content: reply.text ?? "", ...(calls.length ? { toolCalls: calls } : {}) };
              return {
                messages: [...context.messages, message],
                transcriptBytes: context.transcriptBytes + messageBytes(message),
                calls,
                results: calls.map(() => null),
                text: reply.text ?? "",
              };
            }),
          },
        },
      },
      routing: {
        always: [
          { guard: ({ context }) => context.calls.length > 0 && context.turn + 1 < config.maxTurns, target: "acting" },
          { target: "done" },
        ],
      },
      acting: {
        entry: enqueueActions(({ context, enqueue }) => {
          context.calls.forEach((call, j) => {
            if (toolNames.has(call.toolName)) {
              // Invoked as a tool frame, whatever the effect's registered kind (ADR 0140 D9: EffectContext.taskKind "tool").
              enqueue.spawnChild(call.toolName as never, { id: `tool:${context.turn}:${j}`, input: invokeAs("tool", `turn:${context.turn}:tool:${j}`, call.input) as never });
            }
          });
          // A tool the model made up is answered without running anything: the error is the result.
          const unknown = context.calls.map((call) => (toolNames.has(call.toolName) ? null : toolMessage(call, { error: `unknown tool "${call.toolName}"` })));
          if (unknown.some(Boolean)) enqueue.assign({ results: context.results.map((r, j) => r ?? unknown[j] ?? null) });
        }),
        on: {
          "xstate.done.actor.*": { actions: assign(({ context, event }) => recordResult(context, event.actorId, event.output)) },
          "xstate.error.actor.*": {
            actions: assign(({ context, event }) => recordResult(context, event.actorId, { error: (event.error as { message?: string })?.message ?? String(event.error) })),
          },
        },
        always: {
          guard: ({ context }) => context.results.every((r) => r !== null),
          target: "deciding",
          actions: assign(({ context }) => {
            const added = context.results as Message[];
            return {
              messages: [...context.messages, ...added],
              transcriptBytes: context.transcriptBytes + added.reduce((n, m) => n + messageBytes(m), 0),
              sawTaintFrom: [...new Set([...context.sawTaintFrom, ...taintOrigins(added)])],
              calls: [],
              results: [],
              turn: context.turn + 1,
            };
          }),
        },
      },
      done: { type: "final" },
    },
    output: ({ context }) => ({ text: context.text, turns: context.turn + 1, transcriptBytes: context.transcriptBytes, sawTaintFrom: context.sawTaintFrom }),
  });
}

function toolMessage(call: ToolCall, content: unknown): Message {
  return { role: "tool", content, toolCallId: call.id, toolName: call.toolName };
}

function recordResult(context: AgentLoopContext, actorId: string | undefined, output: unknown): Partial<AgentLoopContext> {
  const j = Number(actorId?.split(":")[2]);
  const call = context.calls[j];
  if (!call || context.results[j] !== null) return {};
  const results = [...context.results];
  results[j] = toolMessage(call, output ?? null);
  return { results };
}
