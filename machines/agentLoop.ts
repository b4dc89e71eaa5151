// The agent loop as a pure XState machine: model call -> tool calls -> next turn, until the model answers
// without tool calls or maxTurns. Paste the machine agentLoop$ builds into the Stately visualizer to see it.
import { assign, enqueueActions, setup, type AnyActorLogic, type AnyStateMachine } from "xstate";
import {
  AGENT_COMPACT_CHILD,
  AGENT_HANDOFF_CHILD,
  AGENT_MODEL_CHILD,
  compactStepOf,
  modelStepOf,
  toolCallIdOf,
  toolCallIndexOf,
  toolChildOf,
  toolStepOf,
} from "./helpers/agentIds.js";
import { effectActor, lazyStepInput } from "./helpers/effectActor.js";
import { TOOL_APPROVAL_EVENT } from "./helpers/constants.js";
import { invokeAs } from "./helpers/invokeAs.js";
import type { Message, ModelCallOptions, ModelRequest, ToolApprovalEvent, ToolCall } from "./helpers/messages.js";
import { fencedMessages, tainted, taintOrigins } from "./helpers/taint.js";
import {
  bytesOf,
  compacted,
  compactionSplit,
  ENVELOPE_IN_MODEL_TURN,
  errorMessageOf,
  isEnvelope,
  messageBytes,
  replyOf,
  summaryOf,
} from "./helpers/transcript.js";

export { SUMMARY_ORIGIN } from "./helpers/transcript.js";

export interface AgentLoopMachineConfig {
  id: string;
  /** The machine's version (XState's `version`): what an execution is pinned to (docs/upgrades.md). */
  version?: string;
  model: string;
  tools: AgentLoopTool[];
  system?: string;
  maxTurns: number;
  maxTokens?: number;
  callOptions?: ModelCallOptions;
  compaction?: { toolId: string; afterBytes: number };
  /** Agents the model may hand the conversation off to (`handoffs`): each a tool the model is told of. */
  handoffs?: AgentLoopHandoff[];
}

/**
 * A handoff of the loop (`agentLoop$({ handoffs })`): when the model calls `name`, the loop ends its turn and the
 * agent's machine continues the conversation as a child execution; its answer is the run's answer.
 */
export interface AgentLoopHandoff {
  /** The tool's name as the model sees it, e.g. `transfer_to_writer`. */
  name: string;
  description: string;
  /** The agent's machine (its id is the `lastAgent` of an answer it gives). */
  machine: AnyStateMachine;
  /** The transcript the agent continues with, from this loop's (pure: it runs again on replay). */
  inputFilter(messages: Message[]): Message[];
}

/** A tool of the loop: a registered tool effect by name, or another agent run as a child execution (agentTool). */
export interface AgentLoopTool {
  name: string;
  description?: string;
  /** The input's JSON Schema, sent to the model (an agent tool's; a tool effect's is looked up at run time). */
  inputSchema?: Record<string, unknown>;
  /** A sub-agent: the call starts this machine as a child execution, and its answer is the call's result. */
  agent?: {
    machine: AnyStateMachine;
    /** The problems of a call's input against the tool's schema (pure, synchronous), or none. */
    check(input: unknown): string[];
    /** The sub-agent's input for a call's (valid) input. */
    inputOf(input: unknown): AgentLoopInput;
  };
}

/** An agent loop's input: a prompt, or a whole transcript. */
export type AgentLoopInput = { prompt: string } | { messages: Message[] };

/** An agent loop's output: the final text, turns, transcript bytes and taint origins seen. */
export interface AgentLoopOutput {
  text: string;
  turns: number;
  transcriptBytes: number;
  sawTaintFrom: string[];
  /** The id of the agent that gave the answer, when the run handed the conversation off (absent otherwise). */
  lastAgent?: string;
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
  /** The ids of this turn's tool calls parked until a human's TOOL_APPROVAL (absent in older snapshots). */
  awaiting?: string[];
  /** The handoff tool this turn called (its first call is taken): the loop hands off once the turn's calls are answered. */
  handoff?: string;
  /** The answer of the agent the run handed off to. */
  handedOff?: { agent: string; text: string; turns: number; transcriptBytes: number; sawTaintFrom: string[] };
}

/** The machine's own context: AgentLoopContext, and why the run is refused on its way to `refused` (never in a snapshot). */
export interface AgentLoopMachineContext extends AgentLoopContext {
  refusal?: string;
}

/** Every effect the loop invokes is a placeholder the runtime supplies, read as unknown and narrowed in transcript.ts. */
type EffectLogic = ReturnType<typeof effectActor<unknown, unknown>>;

/** Builds the agent loop machine for one configuration. Pure: every I/O is a named effect. */
export function createAgentLoopMachine(config: AgentLoopMachineConfig) {
  const toolNames = new Set(config.tools.map((t) => t.name));
  // Sub-agents (agentTool): a call starts the agent's machine as a child execution (docs/agents.md).
  const agents = new Map(config.tools.flatMap((t) => (t.agent ? [[t.name, t.agent] as const] : [])));
  // Handoffs (agentLoop$({ handoffs })): a call transfers the conversation to the agent (docs/agents.md).
  const handoffs = new Map((config.handoffs ?? []).map((h) => [h.name, h] as const));
  // What the model is told of the tools and handoffs (never a sub-agent's machine).
  const specs = [
    ...config.tools.map(({ name, description, inputSchema }) => ({
      name,
      ...(description === undefined ? {} : { description }),
      ...(inputSchema === undefined ? {} : { inputSchema }),
    })),
    ...[...handoffs.values()].map(({ name, description }) => ({ name, description, inputSchema: HANDOFF_SCHEMA })),
  ];
  // Every effect the loop may invoke, declared by name: the model, each tool and the summarizer; a sub-agent's machine.
  const actors: Record<string, EffectLogic | AnyActorLogic> = { [config.model]: effectActor() };
  for (const tool of toolNames) actors[tool] = agents.get(tool)?.machine ?? effectActor();
  for (const [name, handoff] of handoffs) actors[name] = handoff.machine;
  if (config.compaction) actors[config.compaction.toolId] = effectActor();

  // The model request of a turn. Its options are read while the transition is planned (a `patchedValue(...)`
  // maxTokens is decided there); the fenced transcript, a walk of every message, is built only when the
  // runtime reads the step's input to run it: a replay serving the turn from the log never builds it.
  const request = (context: AgentLoopMachineContext) => {
    const maxTokens = config.maxTokens;
    const options = config.callOptions;
    return lazyStepInput(modelStepOf(context.turn), (): ModelRequest => ({
      messages: fencedMessages(context.messages),
      tools: specs,
      ...(maxTokens === undefined ? {} : { maxTokens }),
      ...(options === undefined ? {} : { options }),
    }));
  };

  const shouldCompact = (context: AgentLoopMachineContext) =>
    config.compaction !== undefined &&
    context.transcriptBytes > config.compaction.afterBytes &&
    compactionSplit(context.messages).fold.length > 0;

  // A model turn or summary that came back as a claim-check envelope ends the run in `refused`.
  const refuse = (what: string) =>
    ({ guard: "envelope", target: "refused", actions: { type: "refuse", params: { what } } }) as const;

  return setup({
    types: {} as { context: AgentLoopMachineContext; input: AgentLoopInput; output: AgentLoopOutput },
    actors,
    guards: {
      envelope: ({ event }) => isEnvelope(event.output),
      // A decision is taken only for a call parked and still undecided: the runtime asks `snapshot.can` before
      // journaling one, so a second click, an unknown id or a decision after the turn is refused unwritten.
      awaited: ({ context, event }) => {
        const decision = approvalOf(event);
        return decision !== undefined && (context.awaiting ?? []).includes(decision.toolCallId);
      },
    },
    actions: {
      refuse: assign({ refusal: (_, params: { what: string }) => `${params.what} ${ENVELOPE_IN_MODEL_TURN}.` }),
      // The turn's tool calls: each known tool spawned as a tool frame (ADR 0140 D9: ctx.taskKind "tool")
      // unless it waits for approval; a tool the model made up is answered at once with an error result.
      startTools: enqueueActions(({ context, enqueue }) => {
        // A sub-agent's call whose input fails its schema is answered at once with the problems, as a tool's is.
        const invalid = context.calls.map((call) => {
          const problems = agents.get(call.toolName)?.check(call.input) ?? [];
          return problems.length === 0
            ? null
            : toolMessage(call, {
                error: `Invalid input for tool "${call.toolName}": ${problems.join("; ")}. Call it again with input that matches its schema.`,
              });
        });
        context.calls.forEach((call, j) => {
          if (toolNames.has(call.toolName) && !call.needsApproval && invalid[j] === null) {
            const agent = agents.get(call.toolName);
            enqueue.spawnChild(call.toolName, {
              id: toolChildOf(context.turn, j),
              input: agent ? agent.inputOf(call.input) : invokeAs("tool", toolStepOf(context.turn, j), call.input),
            });
          }
        });
        // The turn's first handoff is taken once its other calls are answered; a second one is refused.
        const taken = context.calls.find((call) => handoffs.has(call.toolName));
        const unknown = context.calls.map((call, j) => {
          if (toolNames.has(call.toolName)) return invalid[j];
          if (call === taken) return toolMessage(call, { transferredTo: handoffs.get(call.toolName)!.machine.id });
          if (taken && handoffs.has(call.toolName))
            return toolMessage(call, {
              error: `Only one handoff per turn: this one was not taken; the conversation goes to "${handoffs.get(taken.toolName)!.machine.id}".`,
            });
          return toolMessage(call, { error: `unknown tool "${call.toolName}"` });
        });
        const awaiting = context.calls
          .filter((call) => toolNames.has(call.toolName) && call.needsApproval)
          .map((call) => call.id);
        enqueue.assign({
          results: context.results.map((r, j) => r ?? unknown[j] ?? null),
          awaiting,
          ...(taken ? { handoff: taken.toolName } : {}),
        });
      }),
      // A human's decision on a parked call: approved, the tool runs as the step it would have been; denied,
      // the denial is the call's result. A decision on a call that is not parked changes nothing.
      decide: enqueueActions(({ context, event, enqueue }) => {
        const decision = approvalOf(event);
        const j = decision ? context.calls.findIndex((c) => c.id === decision.toolCallId) : -1;
        const call = context.calls[j];
        if (!decision || !call || !(context.awaiting ?? []).includes(call.id)) return;
        const awaiting = (context.awaiting ?? []).filter((id) => id !== call.id);
        if (decision.approved) {
          enqueue.spawnChild(call.toolName, {
            id: toolChildOf(context.turn, j),
            input: invokeAs("tool", toolStepOf(context.turn, j), call.input),
          });
          enqueue.assign({ awaiting });
          return;
        }
        const results = [...context.results];
        results[j] = toolMessage(call, {
          error: `A human denied this call to "${call.toolName}"${decision.reason ? `: ${decision.reason}` : "."}`,
          denied: true,
        });
        enqueue.assign({ awaiting, results });
      }),
      finishTurn: assign(({ context }) => {
        const added = context.results.filter((r): r is Message => r !== null);
        return {
          messages: [...context.messages, ...added],
          transcriptBytes: context.transcriptBytes + bytesOf(added),
          sawTaintFrom: [...new Set([...context.sawTaintFrom, ...taintOrigins(added)])],
          calls: [],
          results: [],
          awaiting: [],
          turn: context.turn + 1,
        };
      }),
    },
  }).createMachine({
    id: config.id,
    ...(config.version === undefined ? {} : { version: config.version }),
    context: ({ input }) => {
      const valid =
        typeof input === "object" &&
        input !== null &&
        ("messages" in input ? Array.isArray(input.messages) : typeof input.prompt === "string");
      if (!valid)
        throw new TypeError(
          `agentLoop$ "${config.id}" input: { prompt: string } or { messages: Message[] }; got ${JSON.stringify(input) ?? String(input)}.`,
        );
      const given = "messages" in input ? input.messages : [{ role: "user" as const, content: input.prompt }];
      const messages: Message[] = [
        ...(config.system && given[0]?.role !== "system" ? [{ role: "system" as const, content: config.system }] : []),
        ...given,
      ];
      return {
        turn: 0,
        messages,
        transcriptBytes: bytesOf(messages),
        calls: [],
        results: [],
        sawTaintFrom: taintOrigins(messages),
        text: "",
        compactions: 0,
      };
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
          id: AGENT_COMPACT_CHILD,
          // Built when the step runs, as the model request is: a replay serving the summary never splits the transcript.
          input: ({ context }) =>
            lazyStepInput(compactStepOf(context.turn), () => ({ messages: compactionSplit(context.messages).fold })),
          onDone: [
            refuse("The compaction summary"),
            {
              target: "thinking",
              actions: assign(({ context, event }) => {
                const messages = compacted(context.messages, summaryOf(event.output));
                return { messages, transcriptBytes: bytesOf(messages), compactions: context.compactions + 1 };
              }),
            },
          ],
        },
      },
      thinking: {
        invoke: {
          src: config.model,
          id: AGENT_MODEL_CHILD,
          input: ({ context }) => request(context),
          onDone: [
            refuse("The model turn"),
            {
              target: "routing",
              actions: assign(({ context, event }) => {
                const reply = replyOf(event.output);
                // The provider's tool-call id when it gave one (unique in the turn), else the loop's own.
                const ids = reply.toolCalls.map((c) => c.id);
                const calls: ToolCall[] = reply.toolCalls.map((c, j) => ({
                  id: c.id !== undefined && ids.indexOf(c.id) === j ? c.id : toolCallIdOf(context.turn, j),
                  toolName: c.toolName,
                  input: c.input ?? {},
                  ...(c.needsApproval ? { needsApproval: true } : {}),
                }));
                const message: Message = {
                  role: "assistant",
                  content: reply.text,
                  ...(calls.length ? { toolCalls: calls } : {}),
                  // What the provider needs back on the next turn (reasoning items, item ids); absent for most.
                  ...(reply.parts ? { parts: reply.parts } : {}),
                };
                return {
                  messages: [...context.messages, message],
                  transcriptBytes: context.transcriptBytes + messageBytes(message),
                  calls,
                  results: calls.map(() => null),
                  text: reply.text,
                };
              }),
            },
          ],
        },
      },
      routing: {
        always: [
          {
            guard: ({ context }) => context.calls.length > 0 && context.turn + 1 < config.maxTurns,
            target: "acting",
            actions: "startTools",
          },
          { target: "done" },
        ],
      },
      acting: {
        on: {
          "xstate.done.actor.*": {
            actions: assign(({ context, event }) => recordResult(context, event.actorId, event.output, agents)),
          },
          "xstate.error.actor.*": {
            actions: assign(({ context, event }) =>
              recordResult(context, event.actorId, { error: errorMessageOf(event.error) }),
            ),
          },
          [TOOL_APPROVAL_EVENT]: { guard: "awaited", actions: "decide" },
        },
        always: [
          ...(handoffs.size > 0
            ? [
                {
                  guard: ({ context }: { context: AgentLoopMachineContext }) =>
                    context.handoff !== undefined && context.results.every((r) => r !== null),
                  target: "handingOff",
                  actions: "finishTurn" as const,
                },
              ]
            : []),
          {
            guard: ({ context }) => context.results.every((r) => r !== null),
            target: "deciding",
            actions: "finishTurn",
          },
          // Every call that runs has answered; the rest wait for a human.
          {
            guard: ({ context }) =>
              context.results.every(
                (r, j) => r !== null || (context.awaiting ?? []).includes(context.calls[j]?.id ?? ""),
              ),
            target: "awaitingApproval",
          },
        ],
      },
      // Parked, journaled like any state: a restart resumes here, and a TOOL_APPROVAL (journaled) moves it on.
      awaitingApproval: {
        on: { [TOOL_APPROVAL_EVENT]: { guard: "awaited", target: "acting", actions: "decide" } },
      },
      // The conversation goes on in another agent, a child execution journaled like a sub-agent: a resume after a
      // crash continues in the agent that holds it, and its answer is the run's.
      // Only with handoffs: a loop without them keeps the definition (and hash) it had.
      ...(handoffs.size > 0
        ? {
            handingOff: {
              entry: enqueueActions(({ context, enqueue }) => {
                const handoff = handoffs.get(context.handoff ?? "");
                if (handoff)
                  enqueue.spawnChild(handoff.name, {
                    id: AGENT_HANDOFF_CHILD,
                    input: { messages: handoff.inputFilter(context.messages) },
                  });
              }),
              on: {
                [`xstate.done.actor.${AGENT_HANDOFF_CHILD}`]: {
                  target: "done",
                  actions: assign(({ context, event }) => ({
                    handedOff: handedOffAnswer(handoffs.get(context.handoff ?? "")?.machine.id ?? "", event.output),
                  })),
                },
                [`xstate.error.actor.${AGENT_HANDOFF_CHILD}`]: {
                  target: "refused",
                  actions: assign(({ context, event }) => ({
                    refusal: `The agent "${handoffs.get(context.handoff ?? "")?.machine.id ?? context.handoff}" this run handed off to failed: ${errorMessageOf(event.error)}`,
                  })),
                },
              },
            },
          }
        : {}),
      done: { type: "final" },
      refused: { type: "final" },
    },
    // XState v5 has no failing final state: an output that throws is how a pure machine ends in error, and
    // the runtime journals the TypeError as the run's error (the machine reaches `refused` only that way).
    output: ({ context }) => {
      if (context.refusal !== undefined) throw new TypeError(context.refusal);
      const handed = context.handedOff;
      if (handed)
        return {
          text: handed.text,
          turns: context.turn + handed.turns,
          transcriptBytes: handed.transcriptBytes,
          sawTaintFrom: [...new Set([...context.sawTaintFrom, ...handed.sawTaintFrom])],
          lastAgent: handed.agent,
        };
      return {
        text: context.text,
        turns: context.turn + 1,
        transcriptBytes: context.transcriptBytes,
        sawTaintFrom: context.sawTaintFrom,
      };
    },
  });
}

// The input schema of a handoff tool: no arguments (the transcript is what the agent continues with).
const HANDOFF_SCHEMA = { type: "object", properties: {}, additionalProperties: false };

// The answer of the agent a run handed off to, read defensively: an agentLoop$ output, or any machine's `text`.
function handedOffAnswer(agent: string, output: unknown): NonNullable<AgentLoopContext["handedOff"]> {
  const field = (key: string): unknown =>
    typeof output === "object" && output !== null ? Reflect.get(output, key) : undefined;
  const text = field("text");
  const turns = field("turns");
  const bytes = field("transcriptBytes");
  const origins = field("sawTaintFrom");
  const last = field("lastAgent");
  return {
    agent: typeof last === "string" ? last : agent,
    text: typeof text === "string" ? text : typeof output === "string" ? output : "",
    turns: typeof turns === "number" ? turns : 0,
    transcriptBytes: typeof bytes === "number" ? bytes : 0,
    sawTaintFrom: Array.isArray(origins) ? origins.filter((o): o is string => typeof o === "string") : [],
  };
}

function approvalOf(event: { type: string }): ToolApprovalEvent | undefined {
  if (
    event.type !== TOOL_APPROVAL_EVENT ||
    !("toolCallId" in event) ||
    typeof event.toolCallId !== "string" ||
    !("approved" in event) ||
    typeof event.approved !== "boolean"
  )
    return undefined;
  const reason = "reason" in event && typeof event.reason === "string" ? event.reason : undefined;
  return {
    type: TOOL_APPROVAL_EVENT,
    toolCallId: event.toolCallId,
    approved: event.approved,
    ...(reason ? { reason } : {}),
  };
}

// The message's shape is pinned by the golden journals (its bytes are in transcriptBytes): an error result is
// `{ error }` (and `denied` for a denial), recognised by that shape, never by an added field.
function toolMessage(call: ToolCall, content: unknown): Message {
  return { role: "tool", content, toolCallId: call.id, toolName: call.toolName };
}

// A tool call's child reports once; its index is found by building the turn's child ids, never by parsing one.
function recordResult(
  context: AgentLoopMachineContext,
  actorId: string | undefined,
  output: unknown,
  agents?: ReadonlyMap<string, unknown>,
): Partial<AgentLoopMachineContext> {
  const j = toolCallIndexOf(actorId, context.turn, context.calls.length);
  const call = context.calls[j];
  if (!call || context.results[j] !== null) return {};
  const results = [...context.results];
  results[j] = toolMessage(call, agents?.has(call.toolName) ? agentAnswer(output) : (output ?? null));
  return { results };
}

// A sub-agent's output as its call's result: its final text, tainted with every origin its transcript saw (so the
// parent fences it and records them in its own sawTaintFrom).
function agentAnswer(output: unknown): unknown {
  const text = typeof output === "object" && output !== null && "text" in output ? output.text : output;
  const origins: unknown =
    typeof output === "object" && output !== null && "sawTaintFrom" in output ? output.sawTaintFrom : [];
  let answer: unknown = text ?? null;
  if (Array.isArray(origins))
    for (const origin of origins) if (typeof origin === "string") answer = tainted(answer, origin);
  return answer;
}
