// app.stream: an execution's model deltas live, and its recorded turns from the journal, as one indexed
// sequence of parts. Deltas are never journaled: this buffer is in memory, per process. A part's index is
// stable for the life of the buffer, so a client that reconnects with `from` continues exactly.
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import type { RuntimeBus } from "../bus.js";
import { DELTA_TYPES, type ModelDelta, type StreamPart } from "./deltas.js";
import { toUIMessageStream, type UIMessageChunk } from "./uiMessageStream.js";

/** The part types `app.stream` adds around a model step's deltas (the AI SDK's names). */
export const STREAM_PART_TYPES = { ...DELTA_TYPES, startStep: "start-step", finishStep: "finish-step", toolResult: "tool-result" } as const;

export type { StreamPart } from "./deltas.js";

/** Options of `app.stream`. */
export interface StreamOptions {
  /** The first index to deliver: the last index a client saw, plus one. @defaultValue 0 */
  from?: number;
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
}

/** What `app.stream` returns: an async iterable of parts, and the same as an AI SDK UI message stream. */
export interface ExecutionStream extends AsyncIterable<StreamPart> {
  /** A `ReadableStream` of the AI SDK UI message stream protocol (for `useChat` through a transport). */
  toUIMessageStream(): ReadableStream<UIMessageChunk>;
}

type Item = { kind: "delta"; stepId: string; delta: ModelDelta } | { kind: "record"; record: JournalRecord } | { kind: "ended" };

/** Ended executions whose buffers are kept, so a late reconnect still finds its indices. */
const KEPT_ENDED = 32;

class Buffer {
  readonly parts: StreamPart[] = [];
  ended = false;
  private seeded = false;
  private seeding = false;
  private readonly pending: Item[] = [];
  private readonly liveSteps = new Set<string>();
  private readonly journaledSteps = new Set<string>();
  private readonly replies = new Map<string, { id: string }[]>();
  private waiters = new Set<() => void>();

  constructor(private readonly isModel: (effectId: string) => boolean) {}

  /** Reads the journal once, when a stream is first opened: until then what arrives waits in `pending`. */
  load(readLog: () => Promise<JournalRecord[]>): void {
    if (this.seeding) return;
    this.seeding = true;
    readLog().then(
      (records) => this.seed(records),
      () => this.seed([]),
    );
  }

  push(item: Item): void {
    if (item.kind === "delta") this.liveSteps.add(item.stepId);
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

  // The journal as it was when the stream was opened: every recorded step not streamed live in this process
  // (a step whose record also waits in `pending` is applied once, journaledSteps).
  private seed(records: JournalRecord[]): void {
    for (const record of records) {
      const stepId = "stepId" in record && typeof record.stepId === "string" ? record.stepId : undefined;
      if (stepId === undefined || !this.liveSteps.has(stepId)) this.apply({ kind: "record", record });
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
      if (!this.parts.some((p) => p.stepId === item.stepId && p.type === STREAM_PART_TYPES.startStep)) this.add(item.stepId, { type: STREAM_PART_TYPES.startStep });
      this.add(item.stepId, item.delta);
      return;
    }
    const { record } = item;
    if (record.type === EXECUTION_ENDED) this.ended = true;
    if (record.type !== STEP_COMPLETED && record.type !== STEP_FAILED) return;
    if (this.journaledSteps.has(record.stepId)) return;
    this.journaledSteps.add(record.stepId);
    if (this.isModel(record.effectId)) {
      if (record.type === STEP_COMPLETED) this.modelStep(record.stepId, record.output);
      return;
    }
    const call = this.callOf(record.stepId);
    const output = record.type === STEP_COMPLETED ? (record.output ?? null) : { error: record.error.message };
    this.add(record.stepId, { type: STREAM_PART_TYPES.toolResult, ...(call?.id ? { id: call.id } : {}), output, ...(record.type === STEP_FAILED ? { isError: true } : {}) });
  }

  // A model step's end: its recorded reply as whole parts when it was not streamed here, then `finish-step`.
  private modelStep(stepId: string, output: unknown): void {
    const reply = typeof output === "object" && output !== null ? output : {};
    const given: { id?: string; toolName?: string; input?: unknown }[] = "toolCalls" in reply && Array.isArray(reply.toolCalls) ? reply.toolCalls : [];
    // A call the provider gave no id is named after its step, so its tool-result can name it too.
    const calls = given.map((call, j) => ({ ...call, id: call.id ?? `${stepId}:call:${j}` }));
    this.replies.set(stepId, calls);
    if (!this.liveSteps.has(stepId)) {
      this.add(stepId, { type: STREAM_PART_TYPES.startStep });
      if ("reasoning" in reply && typeof reply.reasoning === "string" && reply.reasoning) this.add(stepId, { type: DELTA_TYPES.reasoningDelta, delta: reply.reasoning });
      if ("text" in reply && typeof reply.text === "string" && reply.text) this.add(stepId, { type: DELTA_TYPES.textDelta, delta: reply.text });
      for (const call of calls) this.add(stepId, { type: DELTA_TYPES.toolCall, id: call.id, toolName: String(call.toolName), input: call.input });
    }
    this.add(stepId, { type: STREAM_PART_TYPES.finishStep });
  }

  // The tool call a tool step answers: the agent loop's step ids pair `...:turn:<i>:model` with `...:turn:<i>:tool:<j>`.
  private callOf(stepId: string): { id: string } | undefined {
    const at = stepId.lastIndexOf(":tool:");
    if (at < 0) return undefined;
    return this.replies.get(`${stepId.slice(0, at)}:model`)?.[Number(stepId.slice(at + ":tool:".length))];
  }
}

/** The app's stream buffers, fed by its bus. */
export class StreamHub {
  private readonly buffers = new Map<string, Buffer>();
  // Executions someone opened a stream of: only theirs are kept after the end (a late reconnect finds its indices).
  private readonly opened = new Set<string>();
  private readonly endedOrder: string[] = [];

  constructor(
    bus: RuntimeBus,
    private readonly readLog: (executionId: string) => Promise<JournalRecord[]>,
    private readonly isModel: (effectId: string) => boolean,
  ) {
    bus.on("delta", ({ executionId, stepId, delta }) => this.buffer(executionId).push({ kind: "delta", stepId, delta }));
    bus.on("append", ({ executionId, records }) => {
      const buffer = this.buffers.get(executionId);
      if (buffer) for (const record of records) buffer.push({ kind: "record", record });
    });
    bus.on("ended", ({ executionId }) => {
      const buffer = this.buffers.get(executionId);
      if (!buffer) return;
      buffer.push({ kind: "ended" });
      // Nobody streamed it: a later app.stream rebuilds it from the journal, so nothing is kept per ended execution.
      if (!this.opened.has(executionId)) return void this.buffers.delete(executionId);
      this.endedOrder.push(executionId);
      while (this.endedOrder.length > KEPT_ENDED) {
        const dropped = this.endedOrder.shift()!;
        this.buffers.delete(dropped);
        this.opened.delete(dropped);
      }
    });
  }

  /** The app closed: every open iteration ends once it has what is buffered. */
  close(): void {
    for (const buffer of this.buffers.values()) buffer.push({ kind: "ended" });
  }

  open(executionId: string, options: StreamOptions = {}): ExecutionStream {
    this.opened.add(executionId);
    const buffer = this.buffer(executionId);
    buffer.load(() => this.readLog(executionId));
    const iterate = () => parts(buffer, options);
    return { [Symbol.asyncIterator]: () => iterate()[Symbol.asyncIterator](), toUIMessageStream: () => toUIMessageStream(iterate()) };
  }

  private buffer(executionId: string): Buffer {
    let buffer = this.buffers.get(executionId);
    if (!buffer) {
      buffer = new Buffer(this.isModel);
      this.buffers.set(executionId, buffer);
    }
    return buffer;
  }
}

async function* parts(buffer: Buffer, { from = 0, signal }: StreamOptions): AsyncGenerator<StreamPart> {
  let next = Math.max(0, from);
  const aborted = signal ? new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }))) : undefined;
  for (;;) {
    while (next < buffer.parts.length) yield buffer.parts[next++]!;
    if (buffer.settled || signal?.aborted) return;
    await (aborted ? Promise.race([buffer.changed(), aborted]) : buffer.changed());
  }
}
