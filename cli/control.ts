// The CLI's side of the control socket (adapters/fs/control.ts): reaches the app that holds the journal
// directory's writer lock, if it serves one.
import { connect, type Socket } from "node:net";
import { controlSocketPath, type ControlReply, type ControlRequest } from "../adapters/fs/control.js";
import { LoomworkError } from "../stores/errors.js";

type Request = ControlRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

/** An error the owning app answered with, by its name, code and message. */
export class RemoteError extends LoomworkError {
  static override readonly name: string = "RemoteError";
  constructor(readonly remote: { name: string; message: string; code?: string }) {
    super(remote.code ?? "LOOM_CONTROL", remote.message);
  }
}

export interface ControlClient {
  /** One request, one reply. */
  request(request: Exclude<Request, { op: "stream" }>): Promise<{ status: string; value?: unknown }>;
  /** The execution's stream parts as the app sends them; `onEnd` when it ends or the socket closes. */
  stream(executionId: string, onPart: (part: Record<string, unknown>) => void, onEnd: () => void): void;
  close(): void;
}

/** Connects to the app serving `dir`; undefined when none listens (no socket, or a dead app's). */
export async function connectControl(dir: string): Promise<ControlClient | undefined> {
  const path = controlSocketPath(dir);
  const socket = await new Promise<Socket | undefined>((resolve) => {
    const s = connect(path);
    s.once("connect", () => resolve(s));
    s.once("error", () => resolve(undefined));
  });
  if (!socket) return undefined;
  socket.setEncoding("utf8");
  let nextId = 1;
  const waiting = new Map<number, (reply: ControlReply) => void>();
  let buffered = "";
  let closed = false;
  const onClosed = new Set<() => void>();
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const reply = JSON.parse(buffered.slice(0, newline)) as ControlReply;
      buffered = buffered.slice(newline + 1);
      waiting.get(reply.id)?.(reply);
    }
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed = true;
    for (const listener of onClosed) listener();
  });
  const send = (request: Request, onReply: (reply: ControlReply) => void): number => {
    const id = nextId++;
    waiting.set(id, onReply);
    socket.write(`${JSON.stringify({ ...request, id })}\n`);
    return id;
  };
  return {
    request: (request) =>
      new Promise((resolve, reject) => {
        const gone = () => reject(new RemoteError({ name: "ControlClosedError", message: "the app closed the control socket before it answered" }));
        if (closed) return gone();
        onClosed.add(gone);
        send(request, (reply) => {
          onClosed.delete(gone);
          if ("error" in reply) reject(new RemoteError(reply.error));
          else if ("ok" in reply) resolve({ status: reply.status, ...(reply.value === undefined ? {} : { value: reply.value }) });
        });
      }),
    stream(executionId, onPart, onEnd) {
      onClosed.add(onEnd);
      send({ op: "stream", executionId }, (reply) => {
        if ("part" in reply) onPart(reply.part);
        else if ("end" in reply || "error" in reply) onEnd();
      });
    },
    close: () => void socket.destroy(),
  };
}
