// app.stream's buffer of one execution and its iteration, built when a stream of it is first read
// (actors/agents/streams.ts StreamHub.open). Until then the hub keeps what arrives in order (its tape);
// this buffer takes it over. Also what the hub and the buffer share: the part types, the items, the options.
import { TOOL_APPROVAL_EVENT } from "../../machines/helpers/constants.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED, TRANSITION } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import { DELTA_TYPES, type ModelDelta, type StreamPart } from "./deltas.js";
import { CHILD_EFFECT_ID } from "../journal/children.js";

export { toUIMessageStream } from "./uiMessageStream.js";

/** The part types `app.stream` adds around a model step's deltas (the AI SDK's names). */
export const STREAM_PART_TYPES = {
  ...DELTA_TYPES,
  startStep: "start-step",
  finishStep: "finish-step",
  toolResult: "tool-result",
  /** A tool call waits for a human's decision (`needsApproval`): `id` names it. */
  toolApprovalRequest: "tool-approval-request",
  /** A human decided a parked call (a journaled TOOL_APPROVAL): `id`, `approved`, `reason`. */
  toolApprovalResponse: "tool-approval-response",
  /** A denied call: the call `id` has no output (the model reads the denial as its result). */
  toolOutputDenied: "tool-output-denied",
  /** The execution ended in error: `error` is its message. */
  error: "error",
  /** The execution was stopped: `reason` is why. */
  abort: "abort",
} as const;

/** Options of `app.stream`. */
export interface StreamOptions {
  /** The first index to deliver: the last index a client saw, plus one; a non-negative safe integer, else ConfigError. @defaultValue 0 */
  from?: number;
  /** Ends the iteration when aborted; an AbortSignal, else ConfigError. */
  signal?: AbortSignal;
}

/** What the hub hands an execution's buffer: a live delta, a journaled record, or the end. */
export type StreamItem =
  { kind: "delta"; stepId: string; delta: ModelDelta } | { kind: "record"; record: JournalRecord } | { kind: "ended" };
type Item = StreamItem;

/** The constants the buffer reads. */
export const BUFFER_TYPES = {
  ...STREAM_PART_TYPES,
  executionEnded: EXECUTION_ENDED,
  stepCompleted: STEP_COMPLETED,
  stepFailed: STEP_FAILED,
  eventReceived: EVENT_RECEIVED,
  transition: TRANSITION,
  toolApproval: TOOL_APPROVAL_EVENT,
  /** A child execution's step (a sub-agent's, agentTool): its outcome answers the call with the sub-agent's text. */
  childEffect: CHILD_EFFECT_ID,
  /** The agent loop's state while calls wait for a human (machines/agentLoop.ts). */
  awaitingApproval: "awaitingApproval",
} as const;
export type BufferTypes = typeof BUFFER_TYPES;

/** A tool call of the agent loop's turn in progress, as its model step's reply gave it. */
interface TurnCall {
  id: string;
  toolName: string;
  needsApproval: boolean;
  /** Its tool step: `<loop>#turn:<i>:tool:<j>`. */
  stepId: string;
}

/** The agent loop's turn in progress: its calls, and those that have an outcome in the stream. */
interface OpenTurn {
  loop: string;
  turn: number;
  calls: TurnCall[];
  answered: Set<string>;
}

// An agent loop's step ids: `<loop>#turn:<i>:model`, `...:tool:<j>`, `...:compact` (machines/helpers/agentIds.ts).
const TURN_STEP = /^(.*)#turn:(\d+):/;
// An agent loop's model step: what a step is taken for when its effect is not this app's (a web server follows a worker).
const MODEL_STEP = /#turn:\d+:model$/;
// A sub-agent's step in its agent loop (agentTool): the child `tool:<turn>:<j>`, numbered `:<n>` (docs/actors.md).
export const CHILD_STEP = /^(.*)#tool:(\d+):(\d+):\d+$/;

// What a sub-agent's outcome answers its call with: its final text (tainted as the model read it), else the output.
function answerOf(output: unknown): unknown {
  return typeof output === "object" && output !== null && "text" in output ? output.text : (output ?? null);
}

/** One execution's parts: the journal as it was when the stream was opened, then what arrives live. */
export class StreamBuffer {
  readonly parts: StreamPart[] = [];
  ended = false;
  private seeded = false;
  private seeding = false;
  private readonly journaledSteps = new Set<string>();
  private readonly replies = new Map<string, { id: string }[]>();
  private waiters = new Set<() => void>();
  private turn: OpenTurn | undefined;
  // The last record without a step applied: such a record may come twice (from the journal and from the tape).
  private lastSeq = 0;

  /** `pending`: what arrived before, in order; `liveSteps`: the steps whose deltas arrived live here (the hub's, kept current). */
  constructor(
    private readonly types: BufferTypes,
    private readonly isModel: (effectId: string) => boolean | undefined,
    private readonly pending: Item[],
    private readonly liveSteps: ReadonlySet<string>,
  ) {}

  /** Seeds from the journal as read when the stream was opened: until then what arrives waits in `pending`. */
  load(log: Promise<JournalRecord[]>): void {
    if (this.seeding) return;
    this.seeding = true;
    log.then(
      (records) => this.seed(records),
      () => this.seed([]),
    );
  }

  push(item: Item): void {
    if (!this.seeded) this.pending.push(item);
    else this.apply(item);
    this.wake();
  }
  /** Resolves at the next change. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.add(resolve));
  }

  get settled(): boolean {
    return this.seeded && this.ended;
  }

  // Every delta and record passes here: nothing is allocated when no iteration waits (nobody streams it).
  private wake(): void {
    if (this.waiters.size === 0) return;
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  // The journal as it was when the stream was opened, up to the first step streamed live in this process:
  // the tape has held every record since that step's first delta, in order with the deltas, so from there
  // on `pending` has them all (what it shares with the journal is applied once: steps by id, others by seq).
  private seed(records: JournalRecord[]): void {
    for (const record of records) {
      const stepId = "stepId" in record && typeof record.stepId === "string" ? record.stepId : undefined;
      if (stepId !== undefined && this.liveSteps.has(stepId)) break;
      this.apply({ kind: "record", record });
    }
    this.seeded = true;
    for (const item of this.pending.splice(0)) this.apply(item);
    this.wake();
  }

  private add(stepId: string, part: Omit<StreamPart, "index" | "stepId">): void {
    this.parts.push({ index: this.parts.length, stepId, ...part });
  }

  private apply(item: Item): void {
    if (item.kind === "ended") {
      this.ended = true;
      return;
    }
    if (item.kind === "delta") {
      this.enter(item.stepId);
      if (!this.parts.some((p) => p.stepId === item.stepId && p.type === this.types.startStep))
        this.add(item.stepId, { type: this.types.startStep });
      this.add(item.stepId, item.delta);
      return;
    }
    const { record } = item;
    if (record.type !== this.types.stepCompleted && record.type !== this.types.stepFailed) {
      if (record.seq <= this.lastSeq) return;
      this.lastSeq = record.seq;
      this.control(record);
      return;
    }
    if (this.journaledSteps.has(record.stepId)) return;
    this.journaledSteps.add(record.stepId);
    this.enter(record.stepId);
    if (this.isModel(record.effectId) ?? MODEL_STEP.test(record.stepId)) {
      if (record.type === this.types.stepCompleted) this.modelStep(record.stepId, record.output);
      return;
    }
    const call = this.callOf(record.stepId);
    const output =
      record.type !== this.types.stepCompleted
        ? { error: record.error.message }
        : record.effectId === this.types.childEffect
          ? answerOf(record.output)
          : (record.output ?? null);
    if (call) this.turn?.answered.add(call.id);
    this.add(record.stepId, {
      type: this.types.toolResult,
      ...(call?.id ? { id: call.id } : {}),
      output,
      ...(record.type === this.types.stepFailed ? { isError: true } : {}),
    });
  }

  // The records without a step: a decision on a parked call, the loop parking, the end.
  private control(record: JournalRecord): void {
    if (record.type === this.types.executionEnded) {
      this.ended = true;
      // The turn's calls that never had an outcome (the last allowed turn's, a stopped run's): no part is left
      // waiting for one. The model read nothing for them: this is for the UI only.
      this.unanswered(`no result: the execution ended (${record.status}) before this call had one`, true);
      const stepId = this.parts.at(-1)?.stepId ?? "";
      if (record.status === "error") this.add(stepId, { type: this.types.error, error: record.error?.message ?? "" });
      if (record.status === "stopped")
        this.add(stepId, {
          type: this.types.abort,
          ...(record.error?.message ? { reason: record.error.message } : {}),
        });
      return;
    }
    // Parked: every call of the turn that is not waiting has its answer, so one with no outcome here was
    // answered without a step.
    if (record.type === this.types.transition && record.to === this.types.awaitingApproval) return this.unanswered();
    if (record.type === this.types.eventReceived && record.event.type === this.types.toolApproval) {
      const event: { type: string; toolCallId?: unknown; approved?: unknown; reason?: unknown } = record.event;
      const call = this.turn?.calls.find((c) => c.needsApproval && c.id === event.toolCallId);
      if (!call || this.turn?.answered.has(call.id) || typeof event.approved !== "boolean") return;
      this.add(call.stepId, {
        type: this.types.toolApprovalResponse,
        id: call.id,
        approved: event.approved,
        ...(typeof event.reason === "string" ? { reason: event.reason } : {}),
      });
      if (event.approved) return;
      this.turn?.answered.add(call.id);
      this.add(call.stepId, { type: this.types.toolOutputDenied, id: call.id });
    }
  }

  // A step of a later turn begins: the turn before it has every answer.
  private enter(stepId: string): void {
    const at = TURN_STEP.exec(stepId);
    if (!this.turn || !at || at[1] !== this.turn.loop || Number(at[2]) <= this.turn.turn) return;
    this.unanswered();
    this.turn = undefined;
  }

  // The turn's calls that have no outcome in the stream once the loop moved on or parked: the loop answered
  // them without a step, as it answers a tool the model made up (machines/agentLoop.ts startTools). At the
  // end (`ended`), every call without an outcome, with `error` as its text.
  private unanswered(error?: string, ended = false): void {
    const turn = this.turn;
    if (!turn) return;
    for (const call of turn.calls) {
      if (turn.answered.has(call.id) || (call.needsApproval && !ended)) continue;
      turn.answered.add(call.id);
      this.add(call.stepId, {
        type: this.types.toolResult,
        id: call.id,
        output: { error: error ?? `unknown tool "${call.toolName}"` },
        isError: true,
      });
    }
  }

  // A model step's end: its recorded reply as whole parts when it was not streamed here, the calls that wait
  // for a human, then `finish-step`.
  private modelStep(stepId: string, output: unknown): void {
    const reply = typeof output === "object" && output !== null ? output : {};
    const given: { id?: string; toolName?: string; input?: unknown; needsApproval?: unknown }[] =
      "toolCalls" in reply && Array.isArray(reply.toolCalls) ? reply.toolCalls : [];
    // A call the provider gave no id is named after its step, so its tool-result can name it too.
    const calls = given.map((call, j) => ({ ...call, id: call.id ?? `${stepId}:call:${j}` }));
    this.replies.set(stepId, calls);
    const at = TURN_STEP.exec(stepId);
    if (at && calls.length > 0) {
      this.turn = {
        loop: at[1]!,
        turn: Number(at[2]),
        answered: new Set(),
        calls: calls.map((call, j) => ({
          id: call.id,
          toolName: String(call.toolName),
          needsApproval: call.needsApproval === true,
          stepId: `${at[1]}#turn:${at[2]}:tool:${j}`,
        })),
      };
    }
    const live = this.liveSteps.has(stepId);
    if (!live) {
      this.add(stepId, { type: this.types.startStep });
      if ("reasoning" in reply && typeof reply.reasoning === "string" && reply.reasoning)
        this.add(stepId, { type: this.types.reasoningDelta, delta: reply.reasoning });
      if ("text" in reply && typeof reply.text === "string" && reply.text)
        this.add(stepId, { type: this.types.textDelta, delta: reply.text });
    }
    // Streamed, the step gave its calls as parts (an AI SDK provider's tool-call); one it did not (a model of one's own
    // that streams only its text) is given from the reply, so its result has a call to answer.
    for (const call of calls)
      if (!live || !this.parts.some((p) => p.stepId === stepId && p.type === this.types.toolCall && p.id === call.id))
        this.add(stepId, {
          type: this.types.toolCall,
          id: call.id,
          toolName: String(call.toolName),
          input: call.input,
        });
    for (const call of calls)
      if (call.needsApproval === true) this.add(stepId, { type: this.types.toolApprovalRequest, id: call.id });
    this.add(stepId, { type: this.types.finishStep });
  }

  // The tool call a tool step answers: the agent loop's step ids pair `...:turn:<i>:model` with `...:turn:<i>:tool:<j>`,
  // and with a sub-agent's step (agentTool: the child `tool:<i>:<j>`, its step `<loop>#tool:<i>:<j>:<n>`).
  private callOf(stepId: string): { id: string } | undefined {
    const child = CHILD_STEP.exec(stepId);
    if (child) return this.replies.get(`${child[1]}#turn:${child[2]}:model`)?.[Number(child[3])];
    const at = stepId.lastIndexOf(":tool:");
    if (at < 0) return undefined;
    return this.replies.get(`${stepId.slice(0, at)}:model`)?.[Number(stepId.slice(at + ":tool:".length))];
  }
}

/** What `parts` reads: an execution's buffer, or a tree's (./streams.ts). */
export interface PartSource {
  readonly parts: readonly StreamPart[];
  readonly settled: boolean;
  changed(): Promise<void>;
}

/** The parts of `buffer` from `from` on, as they arrive, until the execution (or tree) has ended (or `signal` aborts). */
export async function* parts(buffer: PartSource, { from = 0, signal }: StreamOptions): AsyncGenerator<StreamPart> {
  // `from` and `signal` were checked at the call (streams.ts checkStreamCall).
  let next = from;
  let onAbort: (() => void) | undefined;
  const aborted = signal
    ? new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener("abort", (onAbort = () => resolve()), { once: true }),
      )
    : undefined;
  try {
    for (;;) {
      while (next < buffer.parts.length) yield buffer.parts[next++]!;
      if (buffer.settled || signal?.aborted) return;
      await (aborted ? Promise.race([buffer.changed(), aborted]) : buffer.changed());
    }
  } finally {
    // A long-lived signal (a server's, shared by many streams) keeps no listener per finished stream.
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
