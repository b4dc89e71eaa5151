// The control socket of a journal directory: the app that holds the directory's writer lock serves the
// CLI's operating commands (`loomwork send`, `approve`, `deny`, `stop`, `resume`, and the live deltas of
// `follow`) on a Unix domain socket next to the lock, so an operator acts through the process that owns
// the journal instead of around it. One request per line of JSON, one reply per line (docs/cli.md,
// "Operating a running app").
import { createHash } from "node:crypto";
import { lstat, mkdir, stat, unlink } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { JournaledActor } from "../../actors/journal/actor.js";
import type { ExecutionStream } from "../../actors/agents/streams.js";
import { STORE_ERROR_CODES } from "../../stores/constants.js";
import { LoomworkError, LoomworkTypeError } from "../../stores/errors.js";
import { hasCode } from "./directory.js";
import { PRIVATE_DIR_MODE } from "./fsOps.js";

/** `serveControl` was called with a bad option: `option` names it. Nothing was written. */
export class ControlOptionsError extends LoomworkTypeError {
  static override readonly name: string = "ControlOptionsError";
  constructor(
    /** The option at fault: `options`, `dir`, `allow` or `app`. */
    readonly option: string,
    message: string,
  ) {
    super(STORE_ERROR_CODES.controlOptions, `serveControl: ${option} ${message}`);
  }
}

/** The control socket cannot be served or reached safely at `path`: the message says why and what to do. */
export class ControlSocketError extends LoomworkError {
  static override readonly name: string = "ControlSocketError";
  constructor(
    /** The socket, or the directory that holds it. */
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(STORE_ERROR_CODES.controlSocket, message, options);
  }
}

/** The socket's file name inside the journal directory. */
export const CONTROL_SOCKET = "loomwork.sock";

/** `serveControl` found another app serving the directory's control socket, alive: one server per journal directory. */
export class ControlInUseError extends LoomworkError {
  static override readonly name: string = "ControlInUseError";
  constructor(
    /** The socket a live app answers on. */
    readonly path: string,
    readonly dir: string,
  ) {
    super(
      STORE_ERROR_CODES.controlInUse,
      `serveControl: a live app already serves the control socket of ${dir} (${path}); it was left alone. ` +
        "Serve the socket from the app that holds the journal's writer lock, once; close the other server first to move it.",
    );
  }
}

// Unix socket paths are limited to ~104 bytes: a longer directory gets its socket in a per-user directory, named by the directory.
const MAX_SOCKET_PATH = 100;

/**
 * Where the app serving `dir` listens (the CLI computes the same path from `--dir`): `<dir>/loomwork.sock`,
 * or for a path over 100 bytes `<runtime>/<hash>.sock`, where `<runtime>` is `$XDG_RUNTIME_DIR/loomwork`,
 * else `<tmpdir>/loomwork-<uid>`. Either way the socket is inside a directory only its user may enter,
 * which both sides check before use (`ControlSocketError` otherwise).
 */
export function controlSocketPath(dir: string): string {
  const absolute = resolve(dir);
  const digest = createHash("sha256").update(absolute).digest("hex").slice(0, 16);
  if (process.platform === "win32") return `\\\\?\\pipe\\loomwork-${digest}`;
  const inside = join(absolute, CONTROL_SOCKET);
  return inside.length <= MAX_SOCKET_PATH ? inside : join(runtimeDirectory(), `${digest}.sock`);
}

function runtimeDirectory(): string {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return runtime && isAbsolute(runtime)
    ? join(runtime, "loomwork")
    : join(tmpdir(), `loomwork-${process.getuid?.() ?? "user"}`);
}

/**
 * Resolves when `path` is a directory (not a symlink) owned by this process's user that no one else can
 * enter, read or write; else rejects with `ControlSocketError` saying which and the fix. A socket inside
 * it is reachable by this user alone whatever the socket file's own mode, from the moment it is bound.
 */
export async function requirePrivateDirectory(path: string, who: string): Promise<void> {
  const info = await lstat(path);
  const perUser = path === runtimeDirectory();
  const uid = process.getuid?.();
  const mode = info.mode & 0o777;
  const fault = !info.isDirectory()
    ? `is ${info.isSymbolicLink() ? "a symbolic link" : "not a directory"}`
    : uid !== undefined && info.uid !== uid
      ? `is owned by uid ${info.uid}, not this process's uid ${uid}`
      : (mode & 0o077) !== 0
        ? `is mode ${mode.toString(8)}, open to other users`
        : undefined;
  if (fault === undefined) return;
  throw new ControlSocketError(
    path,
    `${who}: the control socket's directory ${path} ${fault}, so another user could reach or replace the socket. ` +
      (perUser
        ? `Remove ${path} (serveControl makes it again, 0700), or set XDG_RUNTIME_DIR to a directory of this user's; run loomwork as the user who runs the app.`
        : `Make it this user's and private (chmod 700 ${path}; fsStores tightens a directory this user owns when it opens it), and run loomwork as the user who runs the app.`),
  );
}

/** The longest line either side of the control socket reads (a request, a reply): 4 MiB. A longer one ends the connection. */
export const MAX_CONTROL_LINE_BYTES = 4 * 1024 * 1024;

/**
 * Cuts a byte stream into lines. Each chunk is scanned once, from its own first byte (never the buffered
 * bytes again), and a line is decoded whole (a newline byte never falls inside a UTF-8 character), so a
 * peer that sends no newline costs linear time and at most `max` bytes before `push` says "overflow".
 */
export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;

  constructor(private readonly max: number) {}

  /** The lines `chunk` completes, or "overflow" once a line is longer than `max` bytes (the reader is then spent). */
  push(chunk: Buffer): string[] | "overflow" {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      if (this.size + piece.length > this.max) return "overflow";
      lines.push((this.size === 0 ? piece : Buffer.concat([...this.parts, piece])).toString("utf8"));
      this.parts = [];
      this.size = 0;
      start = newline + 1;
    }
    const rest = chunk.subarray(start);
    if (this.size + rest.length > this.max) return "overflow";
    if (rest.length > 0) {
      this.parts.push(rest);
      this.size += rest.length;
    }
    return lines;
  }
}

/** An event as the CLI sends it. */
export interface ControlEvent {
  type: string;
  [field: string]: unknown;
}

/** A request on the socket (one JSON line). */
export type ControlRequest =
  | { id: number; op: "send"; executionId: string; event: ControlEvent }
  | { id: number; op: "stop"; executionId: string; reason?: string }
  | { id: number; op: "resume"; executionId: string }
  | { id: number; op: "stream"; executionId: string };

/** A reply (one JSON line): a result, a stream part, the stream's end, or an error by name, code and message. */
export type ControlReply =
  | { id: number; ok: true; status: string; value?: unknown }
  | { id: number; part: Record<string, unknown> }
  | { id: number; end: true }
  | { id: number; error: { name: string; message: string; code?: string } };

/** What `serveControl` needs of an app (an `App` has it). */
export interface ControlledApp {
  resume(executionId: string): Promise<JournaledActor>;
  stop(executionId: string, reason?: string): Promise<void>;
  stream(executionId: string, options?: { signal?: AbortSignal }): ExecutionStream;
}

/** Options of `serveControl`. */
export interface ServeControlOptions {
  /** The journal directory the app opened with `fsStores({ dir })` (an `FsStores` has `dir`). */
  dir: string;
  /**
   * Decides whether the CLI may do `op` to the execution (`event` for a send); a refusal reaches the CLI
   * as `LOOM_CONTROL_REFUSED`. @defaultValue everything is allowed
   */
  allow?: (request: { op: "send" | "stop" | "resume"; executionId: string; event?: ControlEvent }) => boolean;
}

/** A running control server: its socket path, and `close` (also call it before `stores.close()`). */
export interface ControlServer {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Serves the CLI's operating commands for `app` on the directory's control socket, in the process that
 * holds the writer lock. The socket is bound inside a directory only this user can enter (the journal
 * directory, 0700, or a private per-user directory for a long path: `controlSocketPath`), checked before
 * it listens (`ControlSocketError` otherwise), so no other user reaches it at any moment. A socket a live
 * app serves is never taken over (`ControlInUseError`); one a dead app left is replaced.
 *
 * @example
 * const stores = await fsStores({ dir: "./.loomwork" });
 * const app = createApp(defineConfig({ stores, effects, logics: [assistant] }));
 * const control = await serveControl(app, { dir: stores.dir });
 * // ... `loomwork send chat-1 '{"type":"USER_MESSAGE","text":"hi"}'` now goes through this app
 * await control.close(); await app.close(); await stores.close();
 */
export async function serveControl(app: ControlledApp, options: ServeControlOptions): Promise<ControlServer> {
  checkOptions(app, options);
  const dir = resolve(options.dir);
  const path = controlSocketPath(dir);
  await requireDirectory(dir);
  if (process.platform !== "win32") {
    // Bound only inside a directory that is this user's alone, checked first: the socket is never reachable by another user.
    const holder = dirname(path);
    if (holder !== dir)
      await mkdir(holder, { mode: PRIVATE_DIR_MODE }).catch((error: unknown) =>
        hasCode(error, "EEXIST") ? undefined : Promise.reject(error),
      );
    await requirePrivateDirectory(holder, "serveControl");
    await removeStaleSocket(path, dir);
  }
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const streams = new Set<AbortController>();
    socket.on("close", () => {
      sockets.delete(socket);
      for (const controller of streams) controller.abort();
    });
    socket.on("error", () => undefined);
    const reply = (message: ControlReply) => void (socket.writable && socket.write(`${JSON.stringify(message)}\n`));
    const lines = new LineReader(MAX_CONTROL_LINE_BYTES);
    socket.on("data", (chunk: Buffer) => {
      const complete = lines.push(chunk);
      if (complete === "overflow") {
        // One answer, then the connection goes: what follows the cut is not read as requests.
        socket.removeAllListeners("data");
        const message = `a request line longer than ${MAX_CONTROL_LINE_BYTES} bytes: the connection is closed`;
        if (socket.writable)
          socket.end(
            `${JSON.stringify({ id: 0, error: { name: "ControlRequestError", code: STORE_ERROR_CODES.controlRefused, message } })}\n`,
            () => socket.destroy(),
          );
        else socket.destroy();
        return;
      }
      for (const line of complete) {
        const request = parseRequest(line);
        if (!request) {
          reply({
            id: 0,
            error: {
              name: "ControlRequestError",
              code: STORE_ERROR_CODES.controlRefused,
              message: `not a control request: ${line.slice(0, 80)}`,
            },
          });
          continue;
        }
        if (request.op === "stream") {
          const controller = new AbortController();
          streams.add(controller);
          void pipeStream(app.stream(request.executionId, { signal: controller.signal }), request.id, reply).finally(
            () => streams.delete(controller),
          );
          continue;
        }
        const event = request.op === "send" ? request.event : undefined;
        if (
          options.allow &&
          !allowed(options.allow, { op: request.op, executionId: request.executionId, ...(event ? { event } : {}) })
        ) {
          reply({
            id: request.id,
            error: {
              name: "ControlRefusedError",
              code: STORE_ERROR_CODES.controlRefused,
              message: `the app refused ${request.op} for execution "${request.executionId}"`,
            },
          });
          continue;
        }
        run(app, request).then(
          (result) => reply({ id: request.id, ok: true, ...result }),
          (error: unknown) => reply({ id: request.id, error: errorOf(error) }),
        );
      }
    });
  });
  await new Promise<void>((resolvePromise, reject) => {
    const failed = (error: unknown) => reject(hasCode(error, "EADDRINUSE") ? new ControlInUseError(path, dir) : error);
    server.once("error", failed);
    server.listen(path, () => {
      server.off("error", failed);
      resolvePromise();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    path,
    close: () =>
      (closing ??= new Promise<void>((resolvePromise) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolvePromise());
      })),
  };
}

// Checked whole before anything is touched: `dir: ""` would serve the working directory, a non-function
// `allow` would throw inside the first request, on the app's event loop.
function checkOptions(app: ControlledApp, options: ServeControlOptions): void {
  if (typeof options !== "object" || options === null)
    throw new ControlOptionsError(
      "options",
      "are missing: pass { dir: stores.dir } (the journal directory the app opened with fsStores).",
    );
  if (typeof options.dir !== "string" || options.dir === "") {
    throw new ControlOptionsError(
      "dir",
      `must be the journal directory the app opened (stores.dir), a non-empty string; got ${options.dir === "" ? '""' : typeof options.dir}.`,
    );
  }
  if (options.allow !== undefined && typeof options.allow !== "function") {
    throw new ControlOptionsError(
      "allow",
      `must be a function ({ op, executionId, event? }) => boolean; got ${typeof options.allow}. Leave it out to allow everything.`,
    );
  }
  const methods = ["resume", "stop", "stream"] as const;
  if (typeof app !== "object" || app === null || methods.some((name) => typeof app[name] !== "function")) {
    throw new ControlOptionsError(
      "app",
      "must be the App that holds the journal (createApp(...)): it needs resume, stop and stream.",
    );
  }
}

// A socket file there is a dead app's (nothing accepts on it) or a live server's: only the first is removed.
async function removeStaleSocket(path: string, dir: string): Promise<void> {
  const found = await lstat(path).catch((error: unknown) =>
    hasCode(error, "ENOENT") ? undefined : Promise.reject(error),
  );
  if (!found) return;
  if (!found.isSocket())
    throw new ControlSocketError(
      path,
      `serveControl: ${path} is not a socket; it was left alone. Move it out of the way, then serve again.`,
    );
  const live = await new Promise<boolean>((resolvePromise) => {
    const probe = connect(path);
    probe.once("connect", () => (probe.destroy(), resolvePromise(true)));
    probe.once("error", (error) => resolvePromise(!hasCode(error, "ECONNREFUSED")));
  });
  if (live) throw new ControlInUseError(path, dir);
  await unlink(path).catch((error: unknown) => (hasCode(error, "ENOENT") ? undefined : Promise.reject(error)));
}

async function requireDirectory(dir: string): Promise<void> {
  const found = await stat(dir).catch((error: unknown) => error as NodeJS.ErrnoException);
  if (found instanceof Error || !found.isDirectory()) {
    throw new ControlSocketError(
      dir,
      `serveControl: the journal directory ${dir} ${found instanceof Error ? "does not exist" : "is not a directory"}. Open it with fsStores({ dir }) first and pass stores.dir.`,
      found instanceof Error ? { cause: found } : undefined,
    );
  }
}

// An `allow` that throws refuses: its error must not escape onto the app's event loop.
function allowed(
  allow: NonNullable<ServeControlOptions["allow"]>,
  request: Parameters<NonNullable<ServeControlOptions["allow"]>>[0],
): boolean {
  try {
    return allow(request) === true;
  } catch {
    return false;
  }
}

async function run(
  app: ControlledApp,
  request: Exclude<ControlRequest, { op: "stream" }>,
): Promise<{ status: string; value?: unknown }> {
  if (request.op === "stop") {
    await app.stop(request.executionId, request.reason ?? "stopped by loomwork stop");
    return { status: "stopped" };
  }
  const actor = await app.resume(request.executionId);
  if (request.op === "send") await actor.sendAsync(request.event);
  const snapshot = actor.getSnapshot();
  return { status: String(snapshot.status), value: snapshot.value };
}

async function pipeStream(stream: ExecutionStream, id: number, reply: (message: ControlReply) => void): Promise<void> {
  try {
    for await (const part of stream) reply({ id, part: JSON.parse(JSON.stringify(part)) as Record<string, unknown> });
    reply({ id, end: true });
  } catch (error) {
    reply({ id, error: errorOf(error) });
  }
}

function parseRequest(line: string): ControlRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { id, op, executionId, event, reason } = value as Record<string, unknown>;
  if (typeof id !== "number" || typeof executionId !== "string") return undefined;
  switch (op) {
    case "send":
      return typeof event === "object" && event !== null && typeof (event as { type?: unknown }).type === "string"
        ? { id, op, executionId, event: event as ControlEvent }
        : undefined;
    case "stop":
      return { id, op, executionId, ...(typeof reason === "string" ? { reason } : {}) };
    case "resume":
    case "stream":
      return { id, op, executionId };
    default:
      return undefined;
  }
}

function errorOf(error: unknown): { name: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const code = error instanceof LoomworkError ? error.code : undefined;
  return { name: error.name, message: error.message, ...(typeof code === "string" ? { code } : {}) };
}
