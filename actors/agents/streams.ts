// app.stream: an execution's model deltas live, and its recorded turns from the journal, as one indexed
// sequence of parts. Deltas are never journaled: this buffer is in memory, per process. A part's index is
// stable for the life of the buffer, so a client that reconnects with `from` continues exactly.
import { shown } from "../../stores/shapes.js";
import type { JournalRecord, StreamFeed, StreamFollow } from "../../stores/types.js";
import { EXECUTION_STARTED, type ExecutionStartedRecord } from "../../stores/schema.js";
import type { RuntimeBus } from "../bus.js";
import { ConfigError, UnknownExecutionError } from "../errors.js";
import type { StreamPart } from "./deltas.js";
import {
  BUFFER_TYPES,
  CHILD_STEP,
  parts,
  StreamBuffer,
  toUIMessageStream,
  type StreamItem,
  type StreamOptions,
} from "./streamBuffer.js";
import { checkUIMessageStreamOptions, type UIMessageChunk, type UIMessageStreamOptions } from "./uiMessageStream.js";

export type { StreamPart } from "./deltas.js";
export { STREAM_PART_TYPES, type StreamItem, type StreamOptions } from "./streamBuffer.js";

/** What `app.stream` returns: an async iterable of parts, and the same as an AI SDK UI message stream. */
export interface ExecutionStream extends AsyncIterable<StreamPart> {
  /**
   * A `ReadableStream` of the AI SDK UI message stream protocol (for `useChat`, through a route's
   * `createUIMessageStreamResponse`, or a transport): one response, which ends when the execution ends or
   * parks for a human's approval; `options.originalMessages` continues the message a request answers.
   */
  toUIMessageStream(options?: UIMessageStreamOptions): ReadableStream<UIMessageChunk>;
}

/** Tapes kept with nobody live behind them (ended here, or not run here), so a late reconnect still finds its indices. */
const KEPT = 32;

// One execution's items from its first delta on. Until a stream of it is read they wait here, in order
// (./streamBuffer.ts then takes them over): each delta and record costs a push, nothing more.
class Tape {
  readonly pending: StreamItem[] = [];
  readonly liveSteps = new Set<string>();
  /** Someone read a stream of it: kept after the end (a late reconnect finds its indices). */
  opened = false;
  /** Iterations reading it now. */
  readers = 0;
  log: Promise<JournalRecord[]> | undefined;
  /** The stream of the tree under this execution (its own parts and its sub-agents'), built on the first read. */
  tree: TreeBuffer | undefined;
  /** Its follow of the stores' stream feed while it runs elsewhere (a fleet worker runs it). */
  follow: StreamFollow | undefined;
  private buffer: StreamBuffer | undefined;

  push(item: StreamItem): void {
    if (item.kind === "delta") this.liveSteps.add(item.stepId);
    if (this.buffer) this.buffer.push(item);
    else this.pending.push(item);
  }

  /** The buffer, built on the first read over what waited here; it reads the journal `log` gave. */
  load(isModel: (effectId: string) => boolean | undefined, readLog: () => Promise<JournalRecord[]>): StreamBuffer {
    // The journal is read once, when a stream is first read.
    if (!this.buffer) {
      const log = (this.log ??= readLog());
      this.buffer = new StreamBuffer(BUFFER_TYPES, isModel, this.pending.splice(0), this.liveSteps);
      this.buffer.load(log);
    }
    return this.buffer;
  }
}

/** What the hub reads of the app: the journal, whether an execution exists, whether it runs here. */
export interface StreamSource {
  readLog(executionId: string): Promise<JournalRecord[]>;
  /** True when the stores hold the execution's log, or this app runs it. */
  exists(executionId: string): Promise<boolean>;
  /** True while this app runs the execution (only then can anything live reach its tape). */
  runsHere(executionId: string): boolean;
  /** Whether the effect is a model's; undefined when this app does not have it (the step id decides then). */
  isModel(effectId: string): boolean | undefined;
  /** The execution's child executions at any depth, with their parents and logics (the catalogue); none when absent. */
  children?(executionId: string): Promise<TreeMember[]>;
  /** The stores' feed of streams between processes: what an execution run elsewhere streams reaches this app by it. */
  feed?: StreamFeed;
}
/** A child execution as the tree's stream knows it. */
export interface TreeMember {
  executionId: string;
  parentId?: string;
  logicId?: string;
  /** Its step in its parent (`EXECUTION_STARTED.parent.stepId`), when known. */
  parentStepId?: string;
}

// The stream of a tree: the root's parts and each child execution's, merged in the order they arrive here, the
// children's tagged with where they come from. Indices are stable for the life of the buffer, as a tape's are.
// A tree with no child is its root's parts, index for index (the same objects: nothing is copied).
class TreeBuffer {
  readonly parts: StreamPart[] = [];
  private readonly members = new Map<string, { member: TreeMember; buffer: StreamBuffer; done: boolean }>();
  private waiters = new Set<() => void>();
  private rootDone = false;
  // False until the children that existed when the tree was opened are known: it is not settled before.
  private listed = false;

  constructor(
    readonly rootId: string,
    private readonly root: StreamBuffer,
  ) {
    void this.pump(root, undefined);
  }

  has(executionId: string): boolean {
    return executionId === this.rootId || this.members.has(executionId);
  }

  /** Takes a child in now; its parts follow once `ready` resolves (what names its place in its parent is known). */
  add(member: TreeMember, buffer: StreamBuffer, ready?: Promise<void>): void {
    if (this.has(member.executionId)) return;
    const entry = { member, buffer, done: false };
    this.members.set(member.executionId, entry);
    if (ready) void ready.then(() => this.pump(buffer, entry));
    else void this.pump(buffer, entry);
  }

  // Whether the child that ran as `stepId` of `parentId` has all its parts here (or is none the tree knows of).
  private childDone(parentId: string, stepId: string): boolean {
    if (!this.listed) return false;
    for (const { member, done } of this.members.values())
      if (member.parentId === parentId && (member.parentStepId === undefined || member.parentStepId === stepId))
        if (!done) return false;
    return true;
  }

  /** True once a child joined: its parts' indices in this tree exist nowhere else, so the tree is kept as a live tape is. */
  get branched(): boolean {
    return this.members.size > 0;
  }

  /** The children that existed when it was opened are known now. */
  markListed(): void {
    this.listed = true;
    this.wake();
  }

  get settled(): boolean {
    return this.listed && this.rootDone && [...this.members.values()].every((entry) => entry.done);
  }

  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.add(resolve));
  }

  private wake(): void {
    if (this.waiters.size === 0) return;
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  // Copies one execution's parts into the tree's as they come, until it has ended.
  private async pump(buffer: StreamBuffer, entry: { member: TreeMember; done: boolean } | undefined): Promise<void> {
    const self = entry?.member.executionId ?? this.rootId;
    let next = 0;
    for (;;) {
      while (next < buffer.parts.length) {
        const part = buffer.parts[next]!;
        // A sub-agent's outcome comes after the sub-agent's own parts, live or rebuilt from the journals alike.
        if (part.type === "tool-result" && CHILD_STEP.test(part.stepId) && !this.childDone(self, part.stepId)) {
          await this.changed();
          continue;
        }
        next++;
        if (entry) this.parts.push({ ...part, index: this.parts.length, ...this.origin(entry.member) });
        else this.parts.push(part.index === this.parts.length ? part : { ...part, index: this.parts.length });
      }
      this.wake();
      if (buffer.settled) break;
      await buffer.changed();
    }
    if (entry) entry.done = true;
    else this.rootDone = true;
    this.wake();
  }

  // Where a child's part comes from: its execution, its agent, and the parent's call it answers (agentTool's step
  // `<loop>#tool:<turn>:<j>:<n>` answers the j-th call of the parent's `<loop>#turn:<turn>:model`).
  private origin(member: TreeMember): Pick<StreamPart, "executionId" | "agent" | "parentToolCallId"> {
    const at = member.parentStepId ? CHILD_STEP.exec(member.parentStepId) : null;
    const parent = member.parentId === this.rootId ? this.root : this.members.get(member.parentId ?? "")?.buffer;
    const modelStep = at ? `${at[1]}#turn:${at[2]}:model` : undefined;
    const call = at
      ? parent?.parts.filter((p) => p.type === "tool-call" && p.stepId === modelStep)[Number(at[3])]
      : undefined;
    return {
      executionId: member.executionId,
      ...(member.logicId === undefined ? {} : { agent: member.logicId }),
      ...(call?.id === undefined ? {} : { parentToolCallId: call.id }),
    };
  }
}

// A child execution as its EXECUTION_STARTED names it.
function memberOf(executionId: string, start: ExecutionStartedRecord): TreeMember {
  return {
    executionId,
    ...(start.parent ? { parentId: start.parent.executionId, parentStepId: start.parent.stepId } : {}),
    logicId: start.logicId,
  };
}

/**
 * The app's stream buffers, fed by its bus. What it holds is bounded by executions, never by calls: an id
 * with no execution gets no tape (its first read rejects), a tape nobody reads of an execution that does
 * not run here is let go, and at most KEPT tapes outlive what runs here.
 */
export class StreamHub {
  private readonly tapes = new Map<string, Tape>();
  // Tapes with nothing live behind them, oldest first: ended here after a read, or read while not run here.
  private readonly kept = new Set<string>();
  // The trees streamed now (their roots' tapes hold them): a child that starts joins the tree of its parent.
  private readonly trees = new Set<TreeBuffer>();
  private closed = false;

  constructor(
    bus: RuntimeBus,
    private readonly source: StreamSource,
  ) {
    bus.on("delta", ({ executionId, stepId, delta }) => this.tape(executionId).push({ kind: "delta", stepId, delta }));
    bus.on("append", ({ executionId, records }) => {
      // A child execution starts: every tree streamed here that holds its parent takes it in.
      const start = records[0];
      if (start?.type === EXECUTION_STARTED && start.parent && this.trees.size > 0)
        this.started(memberOf(executionId, start));
      const tape = this.tapes.get(executionId);
      if (!tape) return;
      // It runs here now (a resume): its tape is live again, not one of the kept.
      this.kept.delete(executionId);
      for (const record of records) tape.push({ kind: "record", record });
    });
    bus.on("ended", ({ executionId }) => {
      const tape = this.tapes.get(executionId);
      if (!tape) return;
      tape.push({ kind: "ended" });
      // Nobody read it: a later app.stream rebuilds it from the journal, so nothing is kept per ended execution.
      if (!tape.opened) return void this.tapes.delete(executionId);
      this.keep(executionId);
    });
  }

  /** The app closed: every open iteration ends once it has what is buffered. */
  close(): void {
    this.closed = true;
    for (const tape of this.tapes.values()) {
      tape.follow?.stop();
      tape.push({ kind: "ended" });
    }
  }

  /** What the hub holds: tapes in all, and of them those kept with nothing live behind them (for tests and leak checks). */
  held(): { tapes: number; kept: number } {
    return { tapes: this.tapes.size, kept: this.kept.size };
  }

  /**
   * Drops what is held of these executions (their subject was erased: the parts are its data too); an
   * open iteration ends at what it has, and a later `open` reads the journal again.
   */
  forget(executionIds: readonly string[]): void {
    for (const executionId of executionIds) {
      this.tapes.get(executionId)?.push({ kind: "ended" });
      this.drop(executionId);
    }
  }

  /**
   * The stream of `executionId`. A bad id, `from` or `signal` is a ConfigError here, at the call; an id with
   * no execution (no log in the stores, not run here) rejects the first read with UnknownExecutionError.
   */
  open(executionId: string, options: StreamOptions = {}): ExecutionStream {
    checkStreamCall(executionId, options);
    // Nothing is held until the first read, and nothing at all for an id with no execution.
    let known: Promise<void> | undefined;
    const check = () => (known ??= this.check(executionId));
    const attach = () => this.attach(executionId);
    const detach = (tape: Tape) => this.detach(executionId, tape);
    const treeOf = (tape: Tape, buffer: StreamBuffer) => this.treeOf(executionId, tape, buffer);
    // The buffer an iteration reads, once attached: how many parts it holds is how a UI stream knows it has read them all.
    let read: { readonly parts: readonly StreamPart[] } | undefined;
    async function* iterate(): AsyncGenerator<StreamPart> {
      await check();
      const { tape, buffer } = attach();
      const tree = treeOf(tape, buffer);
      read = tree;
      try {
        yield* parts(tree, options);
      } finally {
        detach(tape);
      }
    }
    return {
      [Symbol.asyncIterator]: () => iterate(),
      toUIMessageStream: (ui = {}) => {
        checkUIMessageStreamOptions(ui);
        return lazyStream(() => check().then(() => toUIMessageStream(iterate(), ui, () => read?.parts.length ?? 0)));
      },
    };
  }

  private async check(executionId: string): Promise<void> {
    if (this.tapes.has(executionId) || (await this.source.exists(executionId))) return;
    throw new UnknownExecutionError(executionId);
  }

  // Synchronous from the tape's creation to the journal's read: a record appended after the read began is
  // pushed to the tape, one appended before is in the log (the buffer applies a step once).
  private attach(executionId: string): { tape: Tape; buffer: StreamBuffer } {
    const tape = this.tape(executionId);
    tape.opened = true;
    tape.readers++;
    const buffer = tape.load(this.source.isModel, () => this.readLog(executionId, tape));
    // Nothing live stands behind it here (ended, or run elsewhere): bounded with the ended ones, even if a reader never finishes.
    if (!this.source.runsHere(executionId)) this.keep(executionId);
    // After app.close nothing more arrives: the iteration ends with what the journal holds.
    if (this.closed) tape.push({ kind: "ended" });
    return { tape, buffer };
  }

  // The last reader went: a tape with nothing live behind it and no live parts is exactly what the journal
  // rebuilds, so it is let go (a tape that had live deltas stays kept: their indices exist nowhere else).
  private detach(executionId: string, tape: Tape): void {
    tape.readers--;
    if (
      tape.readers > 0 ||
      this.tapes.get(executionId) !== tape ||
      this.source.runsHere(executionId) ||
      tape.liveSteps.size > 0 ||
      tape.tree?.branched === true
    )
      return;
    this.drop(executionId);
  }

  // The journal a tape's buffer is seeded with. An execution run elsewhere is followed through the stores' feed
  // first: what the feed held is in the tape before the journal is read, so the buffer knows which steps streamed.
  private readLog(executionId: string, tape: Tape): Promise<JournalRecord[]> {
    const feed = this.source.feed;
    if (!feed || this.closed || this.source.runsHere(executionId)) return this.source.readLog(executionId);
    tape.follow ??= feed.follow(
      executionId,
      (item) => (item.kind === "child" ? this.started({ ...item.child }) : tape.push(item)),
      () => this.source.readLog(executionId),
    );
    return tape.follow.ready.then(() => this.source.readLog(executionId));
  }

  // A child execution started (here, or where its followed parent runs): every tree streamed here that holds its parent takes it in.
  private started(member: TreeMember): void {
    for (const tree of this.trees) if (tree.has(member.parentId ?? "")) this.join(tree, member);
  }

  private drop(executionId: string): void {
    const tape = this.tapes.get(executionId);
    tape?.follow?.stop();
    if (tape?.tree) this.trees.delete(tape.tree);
    this.tapes.delete(executionId);
    this.kept.delete(executionId);
  }

  // The tree under a root, built on its first read: the children that exist now from the catalogue, later ones as
  // they start (the bus). Without a catalogue of children (`StreamSource.children`) a stream is its root's alone.
  private treeOf(rootId: string, tape: Tape, buffer: StreamBuffer): TreeBuffer {
    if (tape.tree) return tape.tree;
    const tree = new TreeBuffer(rootId, buffer);
    tape.tree = tree;
    this.trees.add(tree);
    const children = this.source.children?.(rootId);
    if (!children) tree.markListed();
    else
      children.then(
        (members) => {
          // In any order: a member joins once its parent has.
          for (let added = true; added;) {
            added = false;
            for (const member of members)
              if (!tree.has(member.executionId) && tree.has(member.parentId ?? "")) {
                this.join(tree, member);
                added = true;
              }
          }
          tree.markListed();
        },
        () => tree.markListed(),
      );
    return tree;
  }

  // A child execution's tape, read by the tree of its root for as long as the tree is held.
  private join(tree: TreeBuffer, member: TreeMember): void {
    if (tree.has(member.executionId)) return;
    const tape = this.tape(member.executionId);
    tape.opened = true;
    tape.readers++;
    const log = (tape.log ??= this.readLog(member.executionId, tape));
    // A child the catalogue listed: its step in its parent is in its start record, read before its parts are copied.
    const ready =
      member.parentStepId === undefined
        ? log.then(
            ([start]) => {
              if (start?.type === EXECUTION_STARTED && start.parent) member.parentStepId = start.parent.stepId;
            },
            () => undefined,
          )
        : undefined;
    const buffer = tape.load(this.source.isModel, () => log);
    if (!this.source.runsHere(member.executionId)) this.keep(member.executionId);
    if (this.closed) tape.push({ kind: "ended" });
    tree.add(member, buffer, ready);
  }

  private keep(executionId: string): void {
    this.kept.delete(executionId);
    this.kept.add(executionId);
    for (const oldest of this.kept) {
      if (this.kept.size <= KEPT) break;
      this.drop(oldest);
    }
  }

  private tape(executionId: string): Tape {
    let tape = this.tapes.get(executionId);
    if (!tape) {
      tape = new Tape();
      this.tapes.set(executionId, tape);
    }
    return tape;
  }
}

// The call's arguments, checked before anything is held: they come from clients (a route's query string).
function checkStreamCall(executionId: unknown, options: unknown): asserts options is StreamOptions {
  if (typeof executionId !== "string" || executionId === "")
    throw new ConfigError("stream.executionId", `a non-empty string naming the execution; got ${shown(executionId)}.`);
  if (typeof options !== "object" || options === null)
    throw new ConfigError("stream.options", `an object { from?, signal? }; got ${shown(options)}.`);
  const from = "from" in options ? options.from : undefined;
  const signal = "signal" in options ? options.signal : undefined;
  if (from !== undefined && !(typeof from === "number" && Number.isSafeInteger(from) && from >= 0)) {
    throw new ConfigError(
      "stream.from",
      `a non-negative safe integer: the index of the next part wanted (the last index seen, plus one); got ${shown(from)}. ` +
        `Check a client's value (a query string through Number() may give NaN) before passing it on.`,
    );
  }
  if (signal !== undefined && !isAbortSignal(signal))
    throw new ConfigError("stream.signal", `an AbortSignal (new AbortController().signal); got ${shown(signal)}.`);
}

// Structural, so that a signal of another realm (jsdom, a worker's polyfill) passes as well.
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== "object" || value === null) return false;
  return (
    "aborted" in value &&
    typeof value.aborted === "boolean" &&
    "addEventListener" in value &&
    typeof value.addEventListener === "function" &&
    "removeEventListener" in value &&
    typeof value.removeEventListener === "function"
  );
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
