// The CLI's side of the control socket (adapters/fs/control.ts): reaches the app that holds the journal
// directory's writer lock, if it serves one. It speaks only to a socket of its own user's, in a directory
// no one else can enter, and takes no reply on trust: each is checked for the shape of a control reply.
import { lstat } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import {
  ControlSocketError,
  controlSocketPath,
  LineReader,
  MAX_CONTROL_LINE_BYTES,
  requirePrivateDirectory,
  type ControlReply,
  type ControlRequest,
} from "../adapters/fs/control.js";
import { hasCode } from "../adapters/fs/directory.js";
import { STORE_ERROR_CODES } from "../stores/constants.js";
import { LoomworkError } from "../stores/errors.js";
import { isObject } from "../stores/shapes.js";

type Request = ControlRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

/** An error the owning app answered with, by its name, code and message. */
export class RemoteError extends LoomworkError {
  static override readonly name: string = "RemoteError";
  constructor(readonly remote: { name: string; message: string; code?: string }) {
    super(remote.code ?? "LOOM_CONTROL", remote.message);
  }
}

/** What came back on the control socket is not a control reply: the connection is dropped, nothing of it is used. */
export class ControlReplyError extends LoomworkError {
  static override readonly name: string = "ControlReplyError";
  constructor(
    readonly path: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(
      STORE_ERROR_CODES.controlReply,
      `the app serving the control socket ${path} answered with something that is not a control reply (${reason}); nothing was taken from it. ` +
        "Check that the process serving it is this journal's app, running a loomwork that speaks the same protocol.",
    );
  }
}

export interface ControlClient {
  /** One request, one reply. */
  request(request: Exclude<Request, { op: "stream" }>): Promise<{ status: string; value?: unknown }>;
  /** The execution's stream parts as the app sends them; `onEnd` when it ends or the socket closes, with the error when a reply was not a control reply. */
  stream(
    executionId: string,
    onPart: (part: Record<string, unknown>) => void,
    onEnd: (error?: LoomworkError) => void,
  ): void;
  close(): void;
}

/**
 * Connects to the app serving `dir`; undefined when none listens (no socket, or a dead app's). Before
 * anything is sent, the socket and its directory must be this user's (`ControlSocketError` otherwise): a
 * socket someone else bound would receive the operator's events and could answer anything.
 */
export async function connectControl(dir: string): Promise<ControlClient | undefined> {
  const path = controlSocketPath(dir);
  if (process.platform !== "win32") {
    const found = await lstat(path).catch((error: unknown) =>
      hasCode(error, "ENOENT") || hasCode(error, "ENOTDIR") ? undefined : Promise.reject(error),
    );
    if (!found) return undefined;
    await requirePrivateDirectory(dirname(path), "loomwork");
    const uid = process.getuid?.();
    if (!found.isSocket() || (uid !== undefined && found.uid !== uid)) {
      throw new ControlSocketError(
        path,
        `the control socket ${path} ${found.isSocket() ? `is owned by uid ${found.uid}, not this process's uid ${uid}` : "is not a socket"}: the CLI does not speak to it. ` +
          "Run loomwork as the user who runs the app that holds the journal.",
      );
    }
  }
  const socket = await new Promise<Socket | undefined>((resolve) => {
    const s = connect(path);
    s.once("connect", () => resolve(s));
    s.once("error", () => resolve(undefined));
  });
  if (!socket) return undefined;
  let nextId = 1;
  const waiting = new Map<number, (reply: ControlReply | LoomworkError) => void>();
  const lines = new LineReader(MAX_CONTROL_LINE_BYTES);
  let closed = false;
  let failure: ControlReplyError | undefined;
  const onClosed = new Set<() => void>();
  // A reply that is not one ends the connection: every waiting request fails with the error, nothing is used.
  const fail = (reason: string) => {
    failure ??= new ControlReplyError(path, reason);
    for (const deliver of waiting.values()) deliver(failure);
    waiting.clear();
    socket.destroy();
  };
  socket.on("data", (chunk: Buffer) => {
    const complete = lines.push(chunk);
    if (complete === "overflow") return fail(`a line longer than ${MAX_CONTROL_LINE_BYTES} bytes`);
    for (const line of complete) {
      if (failure) return;
      const reply = parseReply(line);
      if (typeof reply === "string") return fail(reply);
      waiting.get(reply.id)?.(reply);
    }
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed = true;
    for (const listener of onClosed) listener();
  });
  const send = (request: Request, onReply: (reply: ControlReply | LoomworkError) => void): void => {
    const id = nextId++;
    const line = `${JSON.stringify({ ...request, id })}\n`;
    // The app would cut the connection at its cap: say so here, with the size, instead of "closed before it answered".
    if (Buffer.byteLength(line) > MAX_CONTROL_LINE_BYTES) {
      const size = Buffer.byteLength(line);
      return onReply(
        new LoomworkError(
          STORE_ERROR_CODES.controlRefused,
          `the ${request.op} request is ${size} bytes, over the control socket's ${MAX_CONTROL_LINE_BYTES}-byte line, so it was not sent. Send a smaller event (large data in a file, and its name in the event).`,
        ),
      );
    }
    waiting.set(id, onReply);
    socket.write(line);
  };
  return {
    request: (request) =>
      new Promise((resolve, reject) => {
        const gone = () =>
          reject(
            failure ??
              new RemoteError({
                name: "ControlClosedError",
                message: "the app closed the control socket before it answered",
              }),
          );
        if (closed) return gone();
        onClosed.add(gone);
        send(request, (reply) => {
          onClosed.delete(gone);
          if (reply instanceof LoomworkError) reject(reply);
          else if ("error" in reply) reject(new RemoteError(reply.error));
          else if ("ok" in reply)
            resolve({ status: reply.status, ...(reply.value === undefined ? {} : { value: reply.value }) });
          else reject(new ControlReplyError(path, `a stream part or end as the answer to ${request.op}`));
        });
      }),
    stream(executionId, onPart, onEnd) {
      let ended = false;
      const end = (error?: LoomworkError) => void (ended || ((ended = true), onEnd(error)));
      onClosed.add(() => end(failure));
      send({ op: "stream", executionId }, (reply) => {
        if (reply instanceof LoomworkError) end(reply);
        else if ("part" in reply) onPart(reply.part);
        else end();
      });
    },
    close: () => void socket.destroy(),
  };
}

/** One line from the socket as a control reply, or what is wrong with it. */
export function parseReply(line: string): ControlReply | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return `a line that is not JSON: ${JSON.stringify(line.slice(0, 60))}`;
  }
  if (!isObject(value)) return "JSON that is not an object";
  const { id } = value;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return "no request id";
  if (value.ok === true)
    return typeof value.status === "string"
      ? { id, ok: true, status: value.status, ...(value.value === undefined ? {} : { value: value.value }) }
      : "a result without a string status";
  if ("part" in value) return isObject(value.part) ? { id, part: value.part } : "a stream part that is not an object";
  if (value.end === true) return { id, end: true };
  if ("error" in value) {
    const error = value.error;
    if (
      !isObject(error) ||
      typeof error.name !== "string" ||
      typeof error.message !== "string" ||
      (error.code !== undefined && typeof error.code !== "string")
    )
      return "an error without a string name and message";
    return {
      id,
      error: {
        name: error.name,
        message: error.message,
        ...(typeof error.code === "string" ? { code: error.code } : {}),
      },
    };
  }
  return "none of a result, a stream part, an end or an error";
}
