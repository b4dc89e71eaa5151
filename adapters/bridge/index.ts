// loomwork/bridge: the process that owns the journal (an Electron main process, a worker, a service
// worker) serves its actors to UI processes over any postMessage-style channel (Electron's MessagePort,
// a worker's port, an iframe's). The UI gets remote actors with getSnapshot / subscribe / send, so the
// React hooks work on them unchanged. Browser-safe: no Node import.
import type { JournaledActor } from "../../actors/journal/actor.js";
import { checkExternalEvent } from "../../actors/journal/externalEvents.js";
import type { ExecutionView, ReadModels } from "../../actors/journal/readModels.js";
import type { StreamPart } from "../../actors/agents/streams.js";
import { STORE_ERROR_CODES } from "../../stores/constants.js";
import { LoomworkError, LoomworkTypeError } from "../../stores/errors.js";
import { applyPatch, diffJson, type PatchOp } from "./patch.js";

/**
 * A message channel's end: a `MessagePort` (DOM, `node:worker_threads`), Electron's `MessagePortMain`,
 * a `Worker`, or anything with `postMessage` and a `message` listener.
 */
export interface BridgePort {
  postMessage(message: unknown): void;
  /** `"close"`: the other end is gone (a DOM `MessagePort` in browsers that fire it, a `node:worker_threads` port). */
  addEventListener?(type: "message" | "close", listener: PortListener): void;
  removeEventListener?(type: "message" | "close", listener: PortListener): void;
  /** `"close"`: the other end is gone (Electron's `MessagePortMain`, a `node:worker_threads` port); `"exit"`: a Node `Worker` ended. */
  on?(type: "message" | "close" | "exit", listener: PortListener): void;
  off?(type: "message" | "close" | "exit", listener: PortListener): void;
  start?(): void;
}

/** A port's message listener. Its event differs by platform (a DOM `MessageEvent`, Electron's `{ data }`, a Node value), hence `any`. */
export type PortListener = (event: any) => void;

/** A snapshot as it crosses the channel: its JSON form (status, value, context, output, error). */
export interface BridgedSnapshot {
  status: string;
  value: unknown;
  context: unknown;
  output?: unknown;
  error?: unknown;
  [field: string]: unknown;
}

/** Messages from the UI to the owner. */
type Request =
  | { bridge: "loomwork"; op: "watch"; executionId: string }
  | { bridge: "loomwork"; op: "unwatch"; executionId: string }
  | {
      bridge: "loomwork";
      op: "send";
      id: number;
      executionId: string;
      event: { type: string; [field: string]: unknown };
    }
  | { bridge: "loomwork"; op: "list" }
  | { bridge: "loomwork"; op: "pong" }
  | { bridge: "loomwork"; op: "start"; id: number; logicId: string; input: unknown; executionId?: string }
  | { bridge: "loomwork"; op: "stream"; id: number; executionId: string }
  | { bridge: "loomwork"; op: "cancel"; id: number };

/** Messages from the owner to the UI. */
type Reply =
  | { bridge: "loomwork"; op: "snapshot"; executionId: string; snapshot: BridgedSnapshot | null }
  | { bridge: "loomwork"; op: "patch"; executionId: string; ops: PatchOp[] }
  | { bridge: "loomwork"; op: "sent"; id: number; error?: { name: string; message: string; code?: string } }
  | { bridge: "loomwork"; op: "executions"; executions: ExecutionView[] }
  | { bridge: "loomwork"; op: "ping"; every: number }
  | { bridge: "loomwork"; op: "started"; id: number; executionId?: string; error?: OwnerError }
  | { bridge: "loomwork"; op: "part"; id: number; part: StreamPart }
  | { bridge: "loomwork"; op: "ended"; id: number; error?: OwnerError };

type OwnerError = { name: string; message: string; code?: string };

/** What a UI asks the owner to start (`BridgeClient.start`); the owner's `start` option decides and starts it. */
export interface BridgeStartRequest {
  /** The logic's id (a machine's `id`, as `app.start(logicId, ...)` takes). */
  logicId: string;
  /** The execution's input, as the UI sent it (plain data). */
  input: unknown;
  /** The id the UI asked for, if any. */
  executionId?: string;
}

/** Heartbeats missed in a row after which an end counts the other as gone. */
const MISSED_HEARTBEATS = 3;

/** Options of `serveBridge`. */
export interface ServeBridgeOptions {
  /**
   * Decides whether a UI may send `event` to the execution; refused sends reject in the UI. It is asked only
   * about events the runtime accepts from outside: a reserved type (`xstate.*`, `@xstate.*`, `loom.*`), a
   * malformed event or a malformed TOOL_APPROVAL is refused before it, with the runtime's typed error.
   * @defaultValue every event the runtime accepts from outside is allowed
   */
  allowSend?: (executionId: string, event: { type: string }) => boolean;
  /**
   * Called once when the bridge stops serving its port: the port closed (the window is gone without
   * `close()`: a reload, a crash; the bridge then releases its listeners and subscriptions and posts
   * nothing more), or `close()` was called. Drop the bridge from your list of windows here.
   * @defaultValue nothing is called
   */
  onClose?: () => void;
  /**
   * For ports that never say they closed (a browser's `MessagePort`, a `Worker`'s own channel): the owner
   * pings the UI every `heartbeatMs`; a UI that answers none of 3 pings in a row is gone (the bridge
   * stops, as when its port closes), and a UI that hears no ping for 3 periods turns `"disconnected"`.
   * Electron's ports and `node:worker_threads`' say they closed, so they need none.
   * Not a positive finite number: a `LoomworkTypeError` `LOOM_BRIDGE_OPTIONS`.
   * @defaultValue no heartbeat: only the port's `close` event ends the bridge
   */
  heartbeatMs?: number;
  /**
   * Lets the UI start executions (`client.start(logicId, { input })`): decide, then start, typically
   * `(request) => app.start(request.logicId, { executionId: request.executionId ?? newId(), input: request.input })`.
   * Throw to refuse: the UI's start rejects with `BridgeSendError` carrying your error. The bridge exposes
   * the actor it returns. Check `input`: it comes from the UI.
   * @defaultValue starting from the UI is refused
   */
  start?: (request: BridgeStartRequest) => Promise<JournaledActor>;
  /**
   * Lets the UI read an execution's stream of parts (`client.stream(executionId)`: text as the model writes it,
   * steps, approvals), typically `(executionId) => app.stream(executionId)`. Asked only for executions this bridge
   * serves (exposed or started through it).
   * @defaultValue streams are refused
   */
  stream?: (executionId: string) => AsyncIterable<StreamPart>;
}

/** The owner's side: `expose` the actors the UI may see; `close` stops serving. */
export interface BridgeServer {
  /** Makes an actor visible to the UI (again after a resume: pass the new actor). Ignored once the bridge stopped. */
  expose(actor: JournaledActor): void;
  /** Stops serving: releases the port's listeners and the actors' subscriptions. Also done when the port closes. */
  close(): void;
}

/**
 * Serves an app's actors and its execution list (its read models: `createReadModels(app)`,
 * loomwork/read-models) over `port`, in the process that owns the journal.
 *
 * @example
 * // Electron main: const { port1, port2 } = new MessageChannelMain(); win.webContents.postMessage("loomwork", null, [port2]);
 * const bridge = serveBridge(createReadModels(app), port1);
 * bridge.expose(await app.start(assistant, { executionId: "chat-1", input }));
 */
export function serveBridge(models: ReadModels, port: BridgePort, options: ServeBridgeOptions = {}): BridgeServer {
  const every = options.heartbeatMs;
  if (every !== undefined && !(typeof every === "number" && every > 0 && Number.isFinite(every)))
    throw new LoomworkTypeError(
      STORE_ERROR_CODES.bridgeOptions,
      `serveBridge: heartbeatMs must be a positive finite number of milliseconds (got ${String(every)}).`,
    );
  let stopped = false;
  const actors = new Map<string, JournaledActor>();
  const watched = new Map<string, { unsubscribe(): void } | undefined>();
  const post = (reply: Reply) => {
    if (!stopped) port.postMessage(reply);
  };
  // What the UI holds of each watched execution: the full snapshot once, then what each macrostep changed.
  const sent = new Map<string, BridgedSnapshot | null>();
  const watch = (executionId: string) => {
    watched.get(executionId)?.unsubscribe();
    const actor = actors.get(executionId);
    watched.set(
      executionId,
      actor?.subscribe(() => {
        const ops: PatchOp[] = [];
        sent.set(executionId, diffJson(sent.get(executionId), actor.getSnapshot(), ops) as BridgedSnapshot);
        if (ops.length > 0) post({ bridge: "loomwork", op: "patch", executionId, ops });
      }),
    );
    const snapshot = actor ? plain<BridgedSnapshot>(actor.getSnapshot()) : null;
    sent.set(executionId, snapshot);
    post({ bridge: "loomwork", op: "snapshot", executionId, snapshot });
  };
  let listing: { unsubscribe(): void } | undefined;
  // Streams the UI reads, by request id: returning the iterator stops one (a cancel, or the bridge stopping).
  const streams = new Map<number, AsyncIterator<StreamPart>>();
  const serveStream = (id: number, executionId: string) => {
    const refuse = (name: string, text: string) =>
      post({ bridge: "loomwork", op: "ended", id, error: { name, message: text } });
    if (!options.stream)
      return refuse("BridgeStreamRefusedError", "the owner serves no streams (serveBridge's stream option)");
    if (!actors.has(executionId))
      return refuse("UnknownExecutionError", `execution "${executionId}" is not served over this bridge`);
    let iterator: AsyncIterator<StreamPart>;
    try {
      iterator = options.stream(executionId)[Symbol.asyncIterator]();
    } catch (error) {
      return post({ bridge: "loomwork", op: "ended", id, error: errorOf(error) });
    }
    streams.set(id, iterator);
    const pump = async (): Promise<void> => {
      for (;;) {
        const next = await iterator.next();
        if (!streams.has(id)) return;
        if (next.done) break;
        post({ bridge: "loomwork", op: "part", id, part: plain<StreamPart>(next.value) });
      }
      streams.delete(id);
      post({ bridge: "loomwork", op: "ended", id });
    };
    pump().catch((error: unknown) => {
      if (!streams.delete(id)) return;
      post({ bridge: "loomwork", op: "ended", id, error: errorOf(error) });
    });
  };
  const stopStream = (id: number) => {
    const iterator = streams.get(id);
    streams.delete(id);
    void iterator?.return?.().catch(() => undefined);
  };
  let missed = 0;
  let greeted = false;
  const onRequest = (message: unknown) => {
    if (!isRequest(message)) return;
    missed = 0; // any message from the UI says it is alive
    // The first request is answered with a ping at once, so the UI arms its watch before a period passes.
    if (every !== undefined && !greeted) {
      greeted = true;
      post({ bridge: "loomwork", op: "ping", every });
    }
    switch (message.op) {
      case "pong":
        return;
      case "watch":
        return watch(message.executionId);
      case "unwatch":
        watched.get(message.executionId)?.unsubscribe();
        watched.delete(message.executionId);
        sent.delete(message.executionId);
        return;
      case "send": {
        const { id, executionId, event } = message;
        const actor = actors.get(executionId);
        const refuse = (name: string, text: string) =>
          post({ bridge: "loomwork", op: "sent", id, error: { name, message: text } });
        if (!actor) return refuse("UnknownExecutionError", `execution "${executionId}" is not served over this bridge`);
        // The runtime's check first: allowSend decides among the machine's own events, never on a reserved or malformed one.
        try {
          checkExternalEvent(event, executionId);
        } catch (error) {
          return post({ bridge: "loomwork", op: "sent", id, error: errorOf(error) });
        }
        if (options.allowSend && !options.allowSend(executionId, event))
          return refuse(
            "BridgeSendRefusedError",
            `the owner refused event "${event.type}" for execution "${executionId}"`,
          );
        actor.sendAsync(event).then(
          () => post({ bridge: "loomwork", op: "sent", id }),
          (error: unknown) => post({ bridge: "loomwork", op: "sent", id, error: errorOf(error) }),
        );
        return;
      }
      case "start": {
        const { id } = message;
        if (!options.start)
          return post({
            bridge: "loomwork",
            op: "started",
            id,
            error: {
              name: "BridgeStartRefusedError",
              message: "the owner lets no UI start executions (serveBridge's start option)",
            },
          });
        const request: BridgeStartRequest = {
          logicId: message.logicId,
          input: message.input,
          ...(message.executionId === undefined ? {} : { executionId: message.executionId }),
        };
        Promise.resolve()
          .then(() => options.start!(request))
          .then(
            (actor) => {
              if (stopped) return;
              actors.set(actor.id, actor);
              if (watched.has(actor.id)) watch(actor.id);
              post({ bridge: "loomwork", op: "started", id, executionId: actor.id });
            },
            (error: unknown) => post({ bridge: "loomwork", op: "started", id, error: errorOf(error) }),
          );
        return;
      }
      case "stream":
        return serveStream(message.id, message.executionId);
      case "cancel":
        return stopStream(message.id);
      case "list": {
        const store = models.executions;
        const publish = () =>
          post({
            bridge: "loomwork",
            op: "executions",
            executions: Object.values(store.getSnapshot().context.executions).map((view) => plain<ExecutionView>(view)),
          });
        listing ??= store.subscribe(publish);
        void models.ready.then(publish);
        return publish();
      }
    }
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    detach();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    listing?.unsubscribe();
    for (const id of [...streams.keys()]) stopStream(id);
    for (const subscription of watched.values()) subscription?.unsubscribe();
    watched.clear();
    sent.clear();
    actors.clear();
    options.onClose?.();
  };
  // A window gone without close() (a reload, a crash) closes its port's other end: stop serving it.
  const detach = listen(port, onRequest, stop);
  const heartbeat =
    every === undefined
      ? undefined
      : setInterval(() => {
          if (missed++ >= MISSED_HEARTBEATS) return stop();
          post({ bridge: "loomwork", op: "ping", every });
        }, every);
  return {
    expose(actor) {
      if (stopped) return;
      actors.set(actor.id, actor);
      if (watched.has(actor.id)) watch(actor.id);
    },
    close: stop,
  };
}

/** An execution served over a bridge: the `JournaledActor` surface the UI needs (the React hooks take it). */
export interface RemoteActor {
  readonly id: string;
  /** The latest snapshot the owner sent (the same object until the next), or null before the first and for an execution not served. */
  getSnapshot(): BridgedSnapshot | null;
  subscribe(listener: (snapshot: BridgedSnapshot | null) => void): { unsubscribe(): void };
  /** Sends an event to the execution in the owner's process; resolves once it is journaled there. */
  sendAsync(event: { type: string; [field: string]: unknown }): Promise<void>;
  /** Fire-and-forget `sendAsync`; a failure is passed to `onError` of `connectBridge`. */
  send(event: { type: string; [field: string]: unknown }): void;
}

/**
 * Whether the owner still serves this client: `"connected"`, then `"disconnected"` for good once the port
 * closed (the owner crashed, its process or worker is gone, or it closed the port) or, with the owner's
 * `heartbeatMs`, once no ping came for 3 periods. A UI shows its
 * executions as stale then (no live approval), and reconnects over a new port.
 */
export type BridgeConnection = "connected" | "disconnected";

/** The UI's side of a bridge. */
export interface BridgeClient {
  actor(executionId: string): RemoteActor;
  /**
   * The connection's state: `getSnapshot` / `subscribe`, as `useSyncExternalStore` takes. Once
   * `"disconnected"`, sends in flight and later ones reject with `BridgeDisconnectedError`, and each remote
   * actor keeps its last snapshot.
   */
  readonly connection: {
    getSnapshot(): BridgeConnection;
    subscribe(listener: (state: BridgeConnection) => void): { unsubscribe(): void };
  };
  /**
   * Asks the owner to start an execution of `logicId` (allowed by its `start` option); resolves with its remote
   * actor once the start is journaled. Rejects with `BridgeSendError` when the owner refuses or fails to start it,
   * `BridgeDisconnectedError` when the owner is gone.
   */
  start(logicId: string, options?: { input?: unknown; executionId?: string }): Promise<RemoteActor>;
  /**
   * The execution's stream of parts from the owner (its `stream` option, e.g. `app.stream`): text as the model
   * writes it, steps, approvals. Ends when the owner's stream ends; breaking out of the loop stops it in the owner.
   * Throws `BridgeSendError` when the owner refuses it, `BridgeDisconnectedError` when the owner is gone.
   */
  stream(executionId: string): AsyncIterable<StreamPart>;
  /** The owner's execution list (its read models): `getSnapshot` / `subscribe`, as `useSyncExternalStore` takes. */
  readonly executions: {
    getSnapshot(): ExecutionView[];
    subscribe(listener: (views: ExecutionView[]) => void): { unsubscribe(): void };
  };
  close(): void;
}

/** A send the owner refused or failed (`LOOM_BRIDGE_SEND`): `ownerError` is the owner's error, by name, message and code. */
export class BridgeSendError extends LoomworkError {
  static override readonly name: string = "BridgeSendError";
  readonly ownerError: { name: string; message: string; code?: string };
  constructor(error: { name: string; message: string; code?: string }) {
    super(STORE_ERROR_CODES.bridgeSend, `${error.name}: ${error.message}`);
    this.ownerError = error;
  }
}

/**
 * A send that cannot be answered because the owner is gone (`LOOM_BRIDGE_DISCONNECTED`): its port closed
 * (a crash, its process or worker gone) or its heartbeat stopped, while the send was in flight or before
 * it was made. Whether an
 * event in flight was journaled is unknown to the UI: the owner's next start resumes from its journal.
 */
export class BridgeDisconnectedError extends LoomworkError {
  static override readonly name: string = "BridgeDisconnectedError";
  readonly executionId: string;
  constructor(executionId: string, eventType: string) {
    super(
      STORE_ERROR_CODES.bridgeDisconnected,
      `the bridge's owner is gone (its port closed, or its heartbeat stopped): event "${eventType}" to execution "${executionId}" has no answer`,
    );
    this.executionId = executionId;
  }
}

/**
 * Connects a UI process to the owner's `serveBridge` over `port`.
 *
 * @example
 * // Electron renderer: window.onmessage = (e) => { const client = connectBridge(e.ports[0]); ... }
 * const chat = client.actor("chat-1");
 * chat.subscribe((snapshot) => render(snapshot));
 * await chat.sendAsync({ type: "USER_MESSAGE", text: "hello" });
 */
export function connectBridge(port: BridgePort, options: { onError?: (error: unknown) => void } = {}): BridgeClient {
  const snapshots = new Map<string, BridgedSnapshot | null>();
  const listeners = new Map<string, Set<(snapshot: BridgedSnapshot | null) => void>>();
  const pending = new Map<
    number,
    { executionId: string; type: string; resolve(): void; reject(error: unknown): void }
  >();
  const starting = new Map<
    number,
    { what: string; resolve(executionId: string): void; reject(error: unknown): void }
  >();
  const streams = new Map<number, StreamQueue>();
  let connection: BridgeConnection = "connected";
  const connectionListeners = new Set<(state: BridgeConnection) => void>();
  let closed = false;
  let executions: ExecutionView[] = [];
  const executionListeners = new Set<(views: ExecutionView[]) => void>();
  let nextId = 1;
  let listed = false;
  const request = (message: Request) => port.postMessage(message);
  // Armed by the owner's first ping (heartbeatMs): no ping for 3 periods means the owner is gone.
  let silence: ReturnType<typeof setTimeout> | undefined;
  const onReply = (message: unknown) => {
    if (!isReply(message)) return;
    if (message.op === "ping") {
      clearTimeout(silence);
      silence = setTimeout(disconnect, MISSED_HEARTBEATS * message.every);
      request({ bridge: "loomwork", op: "pong" });
    } else if (message.op === "snapshot" || message.op === "patch") {
      const current = snapshots.get(message.executionId);
      const snapshot = message.op === "snapshot" ? message.snapshot : current ? applyPatch(current, message.ops) : null;
      snapshots.set(message.executionId, snapshot);
      for (const listener of listeners.get(message.executionId) ?? []) listener(snapshot);
    } else if (message.op === "started") {
      const waiting = starting.get(message.id);
      starting.delete(message.id);
      if (message.error || message.executionId === undefined)
        waiting?.reject(new BridgeSendError(message.error ?? { name: "Error", message: "no execution id" }));
      else waiting?.resolve(message.executionId);
    } else if (message.op === "part") {
      streams.get(message.id)?.push(message.part);
    } else if (message.op === "ended") {
      const queue = streams.get(message.id);
      streams.delete(message.id);
      queue?.end(message.error ? new BridgeSendError(message.error) : undefined);
    } else if (message.op === "sent") {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiting?.reject(new BridgeSendError(message.error));
      else waiting?.resolve();
    } else {
      executions = message.executions;
      for (const listener of executionListeners) listener(executions);
    }
  };
  const disconnect = () => {
    if (connection === "disconnected") return;
    connection = "disconnected";
    clearTimeout(silence);
    detach();
    for (const { executionId, type, reject } of pending.values())
      reject(new BridgeDisconnectedError(executionId, type));
    pending.clear();
    for (const { what, reject } of starting.values()) reject(new BridgeDisconnectedError(what, "start"));
    starting.clear();
    for (const queue of streams.values()) queue.end(new BridgeDisconnectedError(queue.executionId, "stream"));
    streams.clear();
    for (const listener of connectionListeners) listener(connection);
  };
  // The owner gone (a crash, its process or worker ended) closes this port's other end.
  const detach = listen(port, onReply, disconnect);
  const actors = new Map<string, RemoteActor>();
  const client: BridgeClient = {
    actor(executionId) {
      let actor = actors.get(executionId);
      if (actor) return actor;
      request({ bridge: "loomwork", op: "watch", executionId });
      const sendAsync = (event: { type: string; [field: string]: unknown }) =>
        new Promise<void>((resolve, reject) => {
          if (connection === "disconnected") return reject(new BridgeDisconnectedError(executionId, event.type));
          if (closed) return reject(closedError());
          const id = nextId++;
          pending.set(id, { executionId, type: event.type, resolve, reject });
          request({ bridge: "loomwork", op: "send", id, executionId, event });
        });
      actor = {
        id: executionId,
        getSnapshot: () => snapshots.get(executionId) ?? null,
        subscribe(listener) {
          let set = listeners.get(executionId);
          if (!set) listeners.set(executionId, (set = new Set()));
          set.add(listener);
          return { unsubscribe: () => void set.delete(listener) };
        },
        sendAsync,
        send: (event) => void sendAsync(event).catch((error: unknown) => options.onError?.(error)),
      };
      actors.set(executionId, actor);
      return actor;
    },
    start(logicId, startOptions = {}) {
      const what = startOptions.executionId ?? logicId;
      return new Promise<string>((resolve, reject) => {
        if (connection === "disconnected") return reject(new BridgeDisconnectedError(what, "start"));
        if (closed) return reject(closedError());
        const id = nextId++;
        starting.set(id, { what, resolve, reject });
        request({
          bridge: "loomwork",
          op: "start",
          id,
          logicId,
          input: startOptions.input,
          ...(startOptions.executionId === undefined ? {} : { executionId: startOptions.executionId }),
        });
      }).then((executionId) => client.actor(executionId));
    },
    stream(executionId) {
      return {
        [Symbol.asyncIterator]: () => {
          const id = nextId++;
          const queue = new StreamQueue(executionId, () => {
            if (streams.delete(id) && connection === "connected" && !closed)
              request({ bridge: "loomwork", op: "cancel", id });
          });
          if (connection === "disconnected") queue.end(new BridgeDisconnectedError(executionId, "stream"));
          else if (closed) queue.end(closedError());
          else {
            streams.set(id, queue);
            request({ bridge: "loomwork", op: "stream", id, executionId });
          }
          return queue;
        },
      };
    },
    executions: {
      getSnapshot: () => executions,
      subscribe(listener) {
        if (!listed) request({ bridge: "loomwork", op: "list" });
        listed = true;
        executionListeners.add(listener);
        return { unsubscribe: () => void executionListeners.delete(listener) };
      },
    },
    connection: {
      getSnapshot: () => connection,
      subscribe(listener) {
        connectionListeners.add(listener);
        return { unsubscribe: () => void connectionListeners.delete(listener) };
      },
    },
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(silence);
      if (connection === "connected")
        for (const executionId of actors.keys()) request({ bridge: "loomwork", op: "unwatch", executionId });
      detach();
      for (const { reject } of pending.values()) reject(closedError());
      pending.clear();
      for (const { reject } of starting.values()) reject(closedError());
      starting.clear();
      for (const queue of streams.values()) queue.end(closedError());
      streams.clear();
    },
  };
  return client;
}

// The UI's end of one stream: parts queue until read; `end` finishes it (with an error, it throws once drained).
class StreamQueue implements AsyncIterator<StreamPart> {
  private readonly parts: StreamPart[] = [];
  private readonly waiting: Array<{ resolve(result: IteratorResult<StreamPart>): void; reject(error: unknown): void }> =
    [];
  private done = false;
  private error: unknown;

  constructor(
    readonly executionId: string,
    private readonly cancel: () => void,
  ) {}

  push(part: StreamPart): void {
    const reader = this.waiting.shift();
    if (reader) reader.resolve({ value: part, done: false });
    else this.parts.push(part);
  }

  end(error?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    for (const reader of this.waiting.splice(0)) {
      if (error === undefined) reader.resolve({ value: undefined, done: true });
      else reader.reject(error);
    }
  }

  next(): Promise<IteratorResult<StreamPart>> {
    const part = this.parts.shift();
    if (part !== undefined) return Promise.resolve({ value: part, done: false });
    if (this.done) {
      const error = this.error;
      this.error = undefined;
      return error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(error);
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<StreamPart>> {
    this.cancel();
    this.end();
    this.parts.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }
}

const closedError = () =>
  new BridgeSendError({ name: "BridgeClosedError", message: "the bridge was closed before the owner answered" });

// Listens for messages and for the other end going away; the returned function removes both listeners.
function listen(port: BridgePort, onMessage: (message: unknown) => void, onClose: () => void): () => void {
  const listener = (event: { data: unknown }) => onMessage(event.data);
  const closing = () => onClose();
  if (port.addEventListener) {
    port.addEventListener("message", listener);
    port.addEventListener("close", closing);
    port.start?.();
    return () => {
      port.removeEventListener?.("message", listener);
      port.removeEventListener?.("close", closing);
    };
  }
  if (port.on) {
    // Electron's MessagePortMain passes { data }; an EventEmitter such as a Node Worker passes the message itself.
    const either = (event: { data: unknown }) => onMessage(isMessage(event) ? event : event.data);
    port.on("message", either);
    port.on("close", closing);
    port.on("exit", closing);
    port.start?.();
    return () => {
      port.off?.("message", either);
      port.off?.("close", closing);
      port.off?.("exit", closing);
    };
  }
  throw new LoomworkTypeError(
    STORE_ERROR_CODES.bridgePort,
    'loomwork/bridge: the port has neither addEventListener nor on("message"): pass a MessagePort, a Worker or Electron\'s MessagePortMain.',
  );
}

// Only plain JSON crosses the channel: a snapshot's own toJSON drops the machine and child actor refs.
function plain<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function errorOf(error: unknown): { name: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, ...(typeof code === "string" ? { code } : {}) };
}

function isMessage(value: unknown): value is { bridge: "loomwork"; op: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { bridge?: unknown }).bridge === "loomwork" &&
    typeof (value as { op?: unknown }).op === "string"
  );
}

function isRequest(value: unknown): value is Request {
  return (
    isMessage(value) && ["watch", "unwatch", "send", "list", "pong", "start", "stream", "cancel"].includes(value.op)
  );
}

function isReply(value: unknown): value is Reply {
  return (
    isMessage(value) &&
    ["snapshot", "patch", "sent", "executions", "ping", "started", "part", "ended"].includes(value.op)
  );
}
