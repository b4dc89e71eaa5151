// agentLoop$: builds the agent loop machine from a config, validates it, and watches its transcript
// for the state-growth warning (ADR 0137 D1): report-only, nothing journaled.
import type { AnyMachineSnapshot } from "xstate";
import type { AnyStateMachine } from "xstate";
import {
  createAgentLoopMachine,
  type AgentLoopContext,
  type AgentLoopHandoff,
  type AgentLoopTool,
} from "../../machines/agentLoop.js";
import { AGENT_TOOL_STEP } from "../../machines/helpers/agentIds.js";
import type { ModelCallOptions } from "../../machines/helpers/messages.js";
import { patchedChoices, patchedValueOf, type PatchedValue } from "../../machines/helpers/patches.js";
import { TAINT_SCAN_INCOMPLETE, TAINT_SCAN_MAX_NODES, UNSCANNED_TAINT_ORIGIN } from "../../machines/helpers/taint.js";
import type { Warning } from "../bus.js";
import { WARNING_CODES } from "../constants.js";
import { ConfigError } from "../errors.js";
import { declareLogic, type DeclaredRun } from "../logicDeclaration.js";
import { isMachineLogic } from "../journal/children.js";
import { handoff } from "./handoff.js";
import type { WarningRoute, WarningSink } from "../warnings.js";

/** Default `warnTranscriptBytes`: 256 KiB (~64k tokens), ADR 0137 D1. */
export const DEFAULT_STATE_GROWTH_WARN_BYTES = 256 * 1024;
/** Default `maxTurns` of an agent loop. */
export const DEFAULT_MAX_TURNS = 50;
/** Options of `agentLoop$`. */
export interface AgentLoopConfig {
  /** The loop's id: the machine id, and the prefix of every step id (`<id>#turn:<i>:model`). */
  id: string;
  /** The registered llm effect the loop calls each turn. */
  model: string;
  /**
   * Registered tool effects the model may call, by name (optionally with a description for the model), and other
   * agents as tools (`agentTool(agent, { description })`: each call a child execution, docs/agents.md).
   */
  tools?: (string | { name: string; description?: string } | AgentLoopTool)[];
  /**
   * Agents the model may hand the conversation off to (`handoff(agent, { description })`, or the agent's machine):
   * each is a tool `transfer_to_<id>`; when the model calls it, the agent continues the conversation as a child
   * execution and its answer is the run's (docs/agents.md, "Handoffs").
   */
  handoffs?: (AnyStateMachine | AgentLoopHandoff)[];
  /**
   * The loop's version (docs/upgrades.md): an execution started on it resumes on it, or is refused. Without
   * one, the loop is identified by its definition hash and its executions resume on its newest definition.
   */
  version?: string;
  /** The system prompt (or `patchedValue(changeId, ifPatched, otherwise)`: per execution, by whether it takes the change). */
  system?: string | PatchedValue<string>;
  /** Most model calls in one run (or a `patchedValue(...)`). @defaultValue 50 */
  maxTurns?: number | PatchedValue<number>;
  /** `maxTokens` passed with every model request (or a `patchedValue(...)`). */
  maxTokens?: number | PatchedValue<number>;
  /**
   * Call options passed with every model request (temperature, topP, topK, stopSequences, seed, toolChoice,
   * providerOptions, headers, ...), over the provider's own (`fromAiSdk(model, { callOptions })`). Not journaled.
   */
  callOptions?: ModelCallOptions;
  /**
   * Summarize the transcript as a recorded step once it exceeds `afterBytes` (ADR 0137 D2). To switch it on
   * for new executions only: `patchedValue(changeId, { toolId, afterBytes }, undefined)` (docs/upgrades.md).
   */
  compaction?:
    { toolId: string; afterBytes: number } | PatchedValue<{ toolId: string; afterBytes: number } | undefined>;
  /**
   * Without compaction, warn once per run when the transcript exceeds this many bytes. Besides compaction,
   * the fix may be the execution.claimCheck opt-in; it withholds an offloaded tool result from the model
   * except its digest/preview, so list only tools whose output the model does not need in full.
   * `false` turns the warning off.
   * @defaultValue DEFAULT_STATE_GROWTH_WARN_BYTES (256 KiB)
   */
  warnTranscriptBytes?: number | false;
  /** Where the warning goes; else the app's observability.onWarn, else configureAgentLoopDefaults, else a process warning. */
  onWarn?: (warning: Warning) => void;
}

interface LoopDefaults {
  onWarn?: (warning: Warning) => void;
  warnTranscriptBytes?: number | false;
}
let defaults: LoopDefaults = {};

/** Sets process-wide defaults for agent loops that do not set their own (an app's onWarn still wins). */
export function configureAgentLoopDefaults(next: LoopDefaults): void {
  defaults = { ...defaults, ...next };
}

/**
 * The agent loop: model call -> tool calls -> next turn, run journaled; a resume re-runs no recorded turn.
 *
 * @example
 * const loop = agentLoop$({ id: "researcher", model: "model", tools: ["search"], compaction: { toolId: "summarize", afterBytes: 65_536 } });
 * await app.start(loop, { executionId: "run-1", input: { prompt: "Find three papers on barn owls" } });
 */
export function agentLoop$(config: AgentLoopConfig) {
  validate(config);
  const machine = createAgentLoopMachine({
    id: config.id,
    model: config.model,
    tools: (config.tools ?? []).map((t) => (typeof t === "string" ? { name: t } : t)),
    ...(config.handoffs === undefined
      ? {}
      : { handoffs: config.handoffs.map((h) => (isMachineLogic(h) ? handoff(h) : h)) }),
    ...(config.callOptions === undefined ? {} : { callOptions: config.callOptions }),
    ...(config.version === undefined ? {} : { version: config.version }),
    // The machine reads these where it uses them, inside the runtime's planning of a macrostep, so a
    // `patchedValue(...)` is decided for the execution being planned (machines/helpers/patches.ts).
    get maxTurns() {
      return patchedValueOf(config.maxTurns ?? DEFAULT_MAX_TURNS);
    },
    get system() {
      return config.system === undefined ? undefined : patchedValueOf(config.system);
    },
    get maxTokens() {
      return config.maxTokens === undefined ? undefined : patchedValueOf(config.maxTokens);
    },
    // Read once outside any planning too (the effects the machine declares): a patched one then counts as switched on.
    get compaction() {
      return config.compaction === undefined ? undefined : patchedValueOf(config.compaction);
    },
  });
  // What the runtime needs to know of the loop, declared as any logic declares it (../logicDeclaration.ts).
  declareLogic(machine, {
    checkInput(input, executionId) {
      if (isAgentLoopInput(input)) return;
      throw new ConfigError(
        "start.input",
        `agentLoop$ "${config.id}" (execution "${executionId}") takes { prompt: string } or { messages: Message[] }; got ${shownInput(input)}.`,
      );
    },
    afterMacrostep(snapshot, run, warn) {
      warnUnscannedTaint(config, snapshot, run, warn);
      if (config.compaction) return;
      const threshold = config.warnTranscriptBytes ?? defaults.warnTranscriptBytes ?? DEFAULT_STATE_GROWTH_WARN_BYTES;
      if (threshold === false) return;
      // A run that failed at once (its input refused by the machine) has no transcript to warn about.
      const context = loopContextOf(snapshot);
      const bytes = context?.transcriptBytes;
      if (typeof bytes !== "number" || bytes <= threshold || run.warned.has(WARNING_CODES.agentStateGrowth)) return;
      run.warned.add(WARNING_CODES.agentStateGrowth);
      const warning: Warning = {
        code: WARNING_CODES.agentStateGrowth,
        executionId: run.executionId,
        loopId: config.id,
        transcriptBytes: bytes,
        warnTranscriptBytes: threshold,
        turn: context?.turn,
        message: stateGrowthMessage(config.id, run.executionId, bytes, threshold),
      };
      warn(warning, routeOf(config));
    },
    // A tool frame pending in a state journaled before the loop invoked its tools with invokeAs("tool", ...).
    roleOfUndeclaredStep: (stepId) =>
      stepId.startsWith(`${config.id}#`) && AGENT_TOOL_STEP.test(stepId) ? "tool" : undefined,
  });
  return machine;
}

// The hooks get an AnyMachineSnapshot, whose context XState types `any`: each of the loop's fields may be
// absent (a run whose input the machine refused at once has no context).
function loopContextOf(snapshot: AnyMachineSnapshot): Partial<AgentLoopContext> | undefined {
  return snapshot.context;
}

const ROLES = new Set<unknown>(["system", "user", "assistant", "tool"]);

/** An agent loop's input: `{ prompt: string }` or `{ messages: Message[] }`, each message with a role. */
function isAgentLoopInput(input: unknown): boolean {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  if ("messages" in input) {
    const messages = input.messages;
    return (
      Array.isArray(messages) &&
      messages.every((m: unknown) => typeof m === "object" && m !== null && "role" in m && ROLES.has(m.role))
    );
  }
  return "prompt" in input && typeof input.prompt === "string";
}

function shownInput(input: unknown): string {
  const text = JSON.stringify(input);
  return text === undefined ? String(input) : text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

export function stateGrowthMessage(loopId: string, executionId: string, bytes: number, threshold: number): string {
  return (
    `agentLoop$ "${loopId}" (execution "${executionId}"): the transcript reached ${bytes} bytes (warnTranscriptBytes ${threshold}) ` +
    `and grows every turn, and so does the folded state a resume reads. Bound it with compaction: { toolId, afterBytes } and a ` +
    `summarizer from createSummarizerEffect (see docs/scaling.md, "Agent state growth"). Tool outputs are most of it: you can also opt in ` +
    `to execution.claimCheck, but an offloaded tool result is withheld from the model except its digest/preview, so list only tools ` +
    `whose output the model does not need in full. Set warnTranscriptBytes: false to silence this warning.`
  );
}

// Once per run, when sawTaintFrom holds the generic origin: a tool result (or an envelope the claim-check
// recorded for one) was too large to scan whole, and the loop fenced it as untrusted rather than trust it.
function warnUnscannedTaint(
  config: AgentLoopConfig,
  snapshot: AnyMachineSnapshot,
  run: DeclaredRun,
  warn: WarningSink,
): void {
  const seen = loopContextOf(snapshot)?.sawTaintFrom;
  if (!Array.isArray(seen) || !seen.includes(UNSCANNED_TAINT_ORIGIN) || run.warned.has(TAINT_SCAN_INCOMPLETE)) return;
  run.warned.add(TAINT_SCAN_INCOMPLETE);
  const loopId = config.id;
  const warning: Warning = {
    code: TAINT_SCAN_INCOMPLETE,
    executionId: run.executionId,
    loopId,
    origin: UNSCANNED_TAINT_ORIGIN,
    message:
      `agentLoop$ "${loopId}" (execution "${run.executionId}"): a tool result was too large to scan whole for taint markers ` +
      `(over ${TAINT_SCAN_MAX_NODES} nodes), so it is treated as untrusted: fenced for the model, never previewed, and listed in ` +
      `sawTaintFrom as "${UNSCANNED_TAINT_ORIGIN}". Return smaller results, or mark the tool's output tainted(value, origin) at its top.`,
  };
  warn(warning, routeOf(config));
}

// The loop's warnings go to its own onWarn, else the app's observability.onWarn, else configureAgentLoopDefaults,
// else the process warning channel; the app's bus hears every one.
function routeOf(config: AgentLoopConfig): WarningRoute {
  return { own: config.onWarn, otherwise: defaults.onWarn, orProcess: true };
}

function validate(config: AgentLoopConfig): void {
  const fail = (key: string, message: string) => {
    throw new ConfigError(`agentLoop$.${key}`, message);
  };
  if (!config || typeof config !== "object") fail("(config)", "agentLoop$ takes { id, model, tools?, ... }.");
  if (typeof config.id !== "string" || !/^[\w.-]+$/.test(config.id))
    fail("id", "a non-empty id of letters, digits, '_', '.', '-' (it prefixes every step id).");
  if (typeof config.model !== "string" || config.model === "")
    fail("model", 'the name of a registered llm effect, e.g. "model".');
  if (
    config.tools !== undefined &&
    (!Array.isArray(config.tools) ||
      config.tools.some((t) => typeof (typeof t === "string" ? t : t?.name) !== "string"))
  ) {
    fail("tools", "an array of registered tool effect names (or { name, description }).");
  }
  if (
    config.callOptions !== undefined &&
    (typeof config.callOptions !== "object" || config.callOptions === null || Array.isArray(config.callOptions))
  ) {
    fail(
      "callOptions",
      "an object of AI SDK call options ({ temperature, topP, toolChoice, seed, providerOptions, headers, ... }).",
    );
  }
  if (config.handoffs !== undefined) {
    if (!Array.isArray(config.handoffs))
      fail("handoffs", "an array of agents (agentLoop$(...) machines) or handoff(agent, { description }).");
    const names = new Set((config.tools ?? []).map((t) => (typeof t === "string" ? t : t.name)));
    for (const h of config.handoffs) {
      const built = isMachineLogic(h) ? handoff(h) : h;
      if (
        typeof built !== "object" ||
        built === null ||
        typeof built.name !== "string" ||
        !isMachineLogic(built.machine)
      )
        fail("handoffs", "an array of agents (agentLoop$(...) machines) or handoff(agent, { description }).");
      if (names.has(built.name))
        fail("handoffs", `two tools or handoffs are named "${built.name}": name one handoff(agent, { name }).`);
      names.add(built.name);
    }
  }
  const each = patchedChoices;
  if (each(config.maxTurns).some((n) => !(Number.isInteger(n) && n > 0)))
    fail("maxTurns", "a positive integer (or patchedValue(changeId, n, m) of two).");
  if (each(config.maxTokens).some((n) => !(Number.isInteger(n) && n > 0)))
    fail("maxTokens", "a positive integer (or patchedValue(changeId, n, m) of two).");
  if (each(config.system).some((text) => typeof text !== "string"))
    fail("system", "a string (or patchedValue(changeId, a, b) of two).");
  if (config.version !== undefined && (typeof config.version !== "string" || config.version === ""))
    fail("version", 'a non-empty string, e.g. "2".');
  for (const c of patchedChoices(config.compaction)) {
    if (c === undefined) continue;
    if (typeof c?.toolId !== "string" || c.toolId === "")
      fail("compaction.toolId", "the name of a registered summarizer effect (createSummarizerEffect).");
    if (!(Number.isFinite(c.afterBytes) && c.afterBytes > 0))
      fail("compaction.afterBytes", "a positive number of bytes, e.g. 65_536.");
  }
  const w = config.warnTranscriptBytes;
  if (w !== undefined && w !== false && !(Number.isFinite(w) && w > 0))
    fail("warnTranscriptBytes", "a positive number of bytes, or false to turn the warning off.");
  if (config.onWarn !== undefined && typeof config.onWarn !== "function")
    fail("onWarn", "a function (warning) => void.");
}
