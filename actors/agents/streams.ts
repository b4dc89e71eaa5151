// app.stream: an execution's model deltas live, and its recorded turns from the journal, as one indexed
// sequence of parts. Deltas are never journaled: this buffer is in memory, per process. A part's index is
// stable for the life of the buffer, so a client that reconnects with `from` continues exactly.
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { JournalRecord } from "../../stores/types.js";
import type { RuntimeBus } from "../bus.js";
import { DELTA_TYPES, type ModelDelta, type StreamPart } from "./deltas.js";
import type { UIMessageChunk } from "./uiMessageStream.js";

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

/** What the hub hands an execution's buffer: a live delta, a journaled record, or the end. */
export type StreamItem = { kind: "delta"; stepId: string; delta: ModelDelta } | { kind: "record"; record: JournalRecord } | { kind: "ended" };

/** The constants the buffer's code reads, handed to it so that it imports no code (./streamBuffer.ts). */
const BUFFER_TYPES = { ...STREAM_PART_TYPES, executionEnded: EXECUTION_ENDED, stepCompleted: STEP_COMPLETED, stepFailed: STEP_FAILED } as const;
export type BufferTypes = typeof BUFFER_TYPES;

/** Ended executions whose buffers are kept, so a late reconnect still finds its indices. */
const KEPT_ENDED = 32;

type StreamBufferCode = typeof import("./streamBuffer.js");
type Loaded = { buffer: InstanceType<StreamBufferCode["StreamBuffer"]>; code: StreamBufferCode };

// One execution's items from its first delta on. Until a stream of it is opened and the buffer's code
// (./streamBuffer.ts) has loaded they wait here, in order: each delta and record costs a push, nothing more.
class Tape {
  readonly pending: StreamItem[] = [];
  readonly liveSteps = new Set<string>();
  log: Promise<JournalRecord[]> | undefined;
  loading: Promise<Loaded> | undefined;
  private buffer: Loaded["buffer"] | undefined;

  push(item: StreamItem): void {
    if (item.kind === "delta") this.liveSteps.add(item.stepId);
    if (this.buffer) this.buffer.push(item);
    else this.pending.push(item);
  }

  /** The buffer, built once its code has loaded, over what waited here; it reads the journal `log` gave. */
  load(isModel: (effectId: string) => boolean, readLog: () => Promise<JournalRecord[]>): Promise<Loaded> {
    // The journal is read once, when a stream is first opened; the buffer's code loads meanwhile.
    const log = (this.log ??= readLog());
    this.loading ??= import("./streamBuffer.js").then((code) => {
      const buffer = new code.StreamBuffer(BUFFER_TYPES, isModel, this.pending.splice(0), this.liveSteps);
      this.buffer = buffer;
      buffer.load(log);
      return { buffer, code };
    });
    return this.loading;
  }
}

/** The app's stream buffers, fed by its bus. */
export class StreamHub {
  private readonly buffers = new Map<string, Tape>();
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

  /**
   * Drops what is buffered of these executions (their subject was erased: the parts are its data too); an
   * open iteration ends at what it has, and a later `open` reads the journal again.
   */
  forget(executionIds: readonly string[]): void {
    for (const executionId of executionIds) {
      this.buffers.get(executionId)?.push({ kind: "ended" });
      this.buffers.delete(executionId);
      this.opened.delete(executionId);
      const at = this.endedOrder.indexOf(executionId);
      if (at >= 0) this.endedOrder.splice(at, 1);
    }
  }

  open(executionId: string, options: StreamOptions = {}): ExecutionStream {
    this.opened.add(executionId);
    const loading = this.buffer(executionId).load(this.isModel, () => this.readLog(executionId));
    async function* iterate(): AsyncGenerator<StreamPart> {
      const { buffer, code } = await loading;
      yield* code.parts(buffer, options);
    }
    return {
      [Symbol.asyncIterator]: () => iterate(),
      toUIMessageStream: () => lazyStream(() => loading.then(({ code }) => code.toUIMessageStream(iterate()))),
    };
  }

  private buffer(executionId: string): Tape {
    let buffer = this.buffers.get(executionId);
    if (!buffer) {
      buffer = new Tape();
      this.buffers.set(executionId, buffer);
    }
    return buffer;
  }
}

// A ReadableStream of the one `make` resolves with: reads and a cancel go through to it.
function lazyStream<T>(make: () => Promise<ReadableStream<T>>): ReadableStream<T> {
  let reader: Promise<ReadableStreamDefaultReader<T>> | undefined;
  const read = () => (reader ??= make().then((stream) => stream.getReader()));
  return new ReadableStream<T>({
    async pull(controller) {
      const { done, value } = await (await read()).read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      await (await read()).cancel(reason);
    },
  });
}
