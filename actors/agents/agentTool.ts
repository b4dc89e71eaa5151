// agentTool: another agent as a tool of an agent loop (issue 34). The model's call starts the agent's machine as a
// child execution of the loop (docs/actors.md), with the call's input as its prompt; its final answer is the call's
// result, tainted with what its transcript saw. Several calls in one turn run in parallel, each journaled as its own
// execution, and a resume serves a finished one from the parent's log.
import type { AnyStateMachine } from "xstate";
import type { AgentLoopInput, AgentLoopTool } from "../../machines/agentLoop.js";
import { ConfigError } from "../errors.js";
import { isMachineLogic } from "../journal/children.js";
import {
  jsonSchemaValidator,
  resolveToolSchema,
  type JsonSchema,
  type ToolInputSchema,
} from "../effects/toolSchema.js";

/** Options of `agentTool`. */
export interface AgentToolOptions {
  /** The tool's name as the model sees it. @defaultValue the agent's machine id */
  name?: string;
  /** What the tool does, for the model (required: it is how the model decides to delegate). */
  description: string;
  /**
   * The call's input: a Standard Schema (zod 4, valibot, arktype), an AI SDK schema or a JSON Schema, sent to the
   * model and checked (as JSON Schema) before the sub-agent starts; a call that fails it gets the problems as its
   * result, as a tool's does. @defaultValue `{ prompt: string }`
   */
  inputSchema?: ToolInputSchema;
  /**
   * The sub-agent's input for a call's input. It runs while the loop's transition is planned (again on replay):
   * keep it pure. @defaultValue the input's `prompt` when it is a string, its only string field, else its JSON text
   */
  input?: (input: unknown) => AgentLoopInput;
}

const DEFAULT_SCHEMA: JsonSchema = {
  type: "object",
  properties: { prompt: { type: "string", description: "The task for the agent, in full." } },
  required: ["prompt"],
  additionalProperties: false,
};

/**
 * Another agent (an `agentLoop$` machine, or any machine whose output has a `text`) as a tool of an agent loop.
 *
 * @example
 * const researcher = agentLoop$({ id: "researcher", model: "model", tools: ["search"] });
 * const lead = agentLoop$({
 *   id: "lead", model: "model",
 *   tools: [agentTool(researcher, { description: "Research one question", inputSchema: z.object({ question: z.string() }) })],
 * });
 */
export function agentTool(agent: AnyStateMachine, options: AgentToolOptions): AgentLoopTool {
  if (!isMachineLogic(agent))
    throw new ConfigError("agentTool.agent", "expected an agent's machine (agentLoop$(...) or a state machine).");
  if (typeof options !== "object" || options === null)
    throw new ConfigError("agentTool.options", "expected { description, inputSchema?, name?, input? }.");
  if (typeof options.description !== "string" || options.description.trim() === "")
    throw new ConfigError(
      "agentTool.description",
      `agent "${agent.id}": say what it does, for the model to decide when to call it.`,
    );
  const name = options.name ?? agent.id;
  if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new ConfigError(
      "agentTool.name",
      `expected 1 to 64 letters, digits, "_" or "-" (what model providers accept as a tool name), got ${JSON.stringify(name)}.`,
    );
  if (options.input !== undefined && typeof options.input !== "function")
    throw new ConfigError(
      "agentTool.input",
      "expected a function from the call's input to { prompt } or { messages }.",
    );
  const inputSchema =
    options.inputSchema === undefined
      ? DEFAULT_SCHEMA
      : resolveToolSchema(options.inputSchema, "agentTool.inputSchema").jsonSchema;
  const validate = jsonSchemaValidator(inputSchema);
  const map = options.input;
  return {
    name,
    description: options.description,
    inputSchema,
    agent: {
      machine: agent,
      check: (input) => validate(input),
      inputOf: (input) => (map ? map(input) : promptOf(input)),
    },
  };
}

// The default mapping: `prompt` when it is a string, the only string field, else the input's JSON text.
function promptOf(input: unknown): AgentLoopInput {
  if (typeof input === "string") return { prompt: input };
  if (typeof input === "object" && input !== null && !Array.isArray(input)) {
    if ("prompt" in input && typeof input.prompt === "string") return { prompt: input.prompt };
    const strings = Object.values(input).filter((value): value is string => typeof value === "string");
    if (strings.length === 1 && Object.keys(input).length === 1) return { prompt: strings[0]! };
  }
  return { prompt: JSON.stringify(input) ?? "" };
}
