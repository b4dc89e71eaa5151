// handoff: another agent an agent loop may hand the conversation off to (issue 34, docs/agents.md "Handoffs"). Kept
// apart from agentTool (which needs the JSON Schema validator) so that a loop with no handoff pays nothing for it.
import type { AnyStateMachine } from "xstate";
import type { AgentLoopHandoff } from "../../machines/agentLoop.js";
import type { Message } from "../../machines/helpers/messages.js";
import { ConfigError } from "../errors.js";
import { isMachineLogic } from "../journal/children.js";

/** Options of `handoff(agent, options)`. */
export interface HandoffOptions {
  /** The tool's name as the model sees it. @defaultValue `transfer_to_<agent id>` (the OpenAI Agents SDK's convention) */
  name?: string;
  /** When the model should hand off, for the model. @defaultValue `Hand the conversation off to the agent "<id>".` */
  description?: string;
  /**
   * The transcript the agent continues with, from the handing-off loop's. It runs while the transition is planned
   * (again on replay): keep it pure. @defaultValue `handoffTranscript`: every message but the system prompt
   */
  inputFilter?: (messages: Message[]) => Message[];
}

/**
 * The transcript a handoff passes on by default: the whole conversation (the user's messages, the answers, the tool
 * calls and their results, the handoff call itself) without the handing-off agent's system prompt, which the
 * receiving agent replaces with its own, and without the provider items of its replies (another model reads it).
 */
export function handoffTranscript(messages: Message[]): Message[] {
  return messages.filter((message) => message.role !== "system").map(({ parts: _parts, ...message }) => message);
}

/**
 * Another agent the model may hand the conversation off to (`agentLoop$({ handoffs: [handoff(writer)] })`; a bare
 * machine in `handoffs` is `handoff(machine)`). The agent continues with the transcript as a child execution, and
 * its answer is the run's answer (`output.lastAgent` names it).
 *
 * @example
 * const writer = agentLoop$({ id: "writer", model: "model", system: "Write the final answer." });
 * const lead = agentLoop$({ id: "lead", model: "model", tools: ["search"], handoffs: [handoff(writer, { description: "When the research is done" })] });
 */
export function handoff(agent: AnyStateMachine, options: HandoffOptions = {}): AgentLoopHandoff {
  if (!isMachineLogic(agent))
    throw new ConfigError("handoff.agent", "expected an agent's machine (agentLoop$(...) or a state machine).");
  if (typeof options !== "object" || options === null)
    throw new ConfigError("handoff.options", "expected { name?, description?, inputFilter? }.");
  const name = options.name ?? `transfer_to_${agent.id.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
  if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new ConfigError(
      "handoff.name",
      `expected 1 to 64 letters, digits, "_" or "-" (what model providers accept as a tool name), got ${JSON.stringify(name)}.`,
    );
  if (options.description !== undefined && (typeof options.description !== "string" || options.description === ""))
    throw new ConfigError("handoff.description", `agent "${agent.id}": a non-empty string, for the model.`);
  if (options.inputFilter !== undefined && typeof options.inputFilter !== "function")
    throw new ConfigError("handoff.inputFilter", "expected a function from the transcript to the messages to pass on.");
  return {
    name,
    description: options.description ?? `Hand the conversation off to the agent "${agent.id}".`,
    machine: agent,
    inputFilter: options.inputFilter ?? handoffTranscript,
  };
}
