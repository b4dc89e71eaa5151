// The harness agent as a LangGraph.js StateGraph: the same model script (workloadReply) and the same
// tool outputs (toolOutput), an "agent" node and a "tools" node, with a checkpointer. LangGraph is a
// devDependency used only by the benchmark.
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  END,
  MessagesAnnotation,
  MessagesDeltaValue,
  START,
  StateGraph,
  StateSchema,
  type BaseCheckpointSaver,
  type MemorySaver,
} from "@langchain/langgraph";
import { toolOutput, workloadReply } from "../spec/support/workload.js";

/** `messages`: MessagesAnnotation (the documented default); `delta`: the experimental MessagesDeltaValue. */
export type LangGraphState = "messages" | "delta";

export interface GraphOptions {
  turns: number;
  state: LangGraphState;
  checkpointer: BaseCheckpointSaver;
  /** Called when the tool of `stallAt` starts: it then never resolves (an interrupted run). */
  stallAt?: { turn: number; reached: () => void };
  /** Called whenever the tools node starts, with the turn. */
  onTool?: (turn: number) => void;
}

export const THREAD = { configurable: { thread_id: "bench" } };

const turnOf = (messages: BaseMessage[]) => messages.filter((m) => AIMessage.isInstance(m)).length;

export function buildGraph(options: GraphOptions) {
  const reply = workloadReply(options.turns);
  const agent = async (state: { messages: BaseMessage[] }) => {
    const call = turnOf(state.messages);
    const r = reply(null, call);
    const message = new AIMessage({
      content: r.text ?? "",
      tool_calls: (r.toolCalls ?? []).map((c, j) => ({
        id: `call_${call}_${j}`,
        name: c.toolName,
        args: c.input as Record<string, unknown>,
        type: "tool_call" as const,
      })),
      ...(r.usage
        ? {
            usage_metadata: {
              input_tokens: r.usage.inputTokens,
              output_tokens: r.usage.outputTokens,
              total_tokens: r.usage.inputTokens + r.usage.outputTokens,
            },
          }
        : {}),
    });
    return { messages: [message] };
  };
  const tools = async (state: { messages: BaseMessage[] }) => {
    const last = state.messages.at(-1) as AIMessage;
    const turn = turnOf(state.messages) - 1;
    options.onTool?.(turn);
    if (options.stallAt && turn >= options.stallAt.turn) {
      options.stallAt.reached();
      await new Promise<never>(() => undefined);
    }
    return {
      messages: (last.tool_calls ?? []).map(
        (call) =>
          new ToolMessage({ content: JSON.stringify(toolOutput(42, turn)), tool_call_id: call.id!, name: call.name }),
      ),
    };
  };
  const route = (state: { messages: BaseMessage[] }) =>
    (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END;
  const schema = options.state === "messages" ? MessagesAnnotation : new StateSchema({ messages: MessagesDeltaValue });
  // The two state shapes give the same node signatures; the builder's generics differ, hence the casts.
  const graph = new StateGraph(schema as typeof MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", tools)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", route, ["tools", END])
    .addEdge("tools", "agent");
  return graph.compile({ checkpointer: options.checkpointer });
}

/** The run's input and config: one thread, a recursion limit above 2 supersteps per turn. */
export function invokeArgs(turns: number, signal?: AbortSignal) {
  return {
    input: { messages: [new HumanMessage("research")] },
    config: { ...THREAD, recursionLimit: 2 * turns + 10, ...(signal ? { signal } : {}) },
  };
}

/** Bytes a MemorySaver holds: serialized checkpoints, their metadata, and pending writes (each node's output). */
export function memorySaverBytes(saver: MemorySaver): {
  total: number;
  checkpoints: number;
  metadata: number;
  writes: number;
  count: number;
} {
  const out = { total: 0, checkpoints: 0, metadata: 0, writes: 0, count: 0 };
  for (const thread of Object.values(saver.storage)) {
    for (const ns of Object.values(thread)) {
      for (const [checkpoint, metadata] of Object.values(ns)) {
        out.checkpoints += checkpoint.byteLength;
        out.metadata += metadata.byteLength;
        out.count++;
      }
    }
  }
  for (const writes of Object.values(saver.writes))
    for (const [, , value] of Object.values(writes)) out.writes += value.byteLength;
  out.total = out.checkpoints + out.metadata + out.writes;
  return out;
}
