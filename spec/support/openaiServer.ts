// A small OpenAI-compatible HTTP server on 127.0.0.1 for the provider tests: chat completions, plain and
// SSE-streamed, with text, reasoning, tool calls and usage, and scripted error statuses. The real AI SDK
// provider packages talk to it over the loopback; every request body is kept for assertions.
import { postedJson } from "./http.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted answer: a reply, or an error status. */
export type ServerTurn =
  | {
      text?: string;
      reasoning?: string;
      toolCalls?: { id?: string; name: string; arguments: string }[];
      usage?: { prompt: number; completion: number };
      /** Streamed: how many characters each text chunk carries. @defaultValue 4 */
      chunkChars?: number;
      /** Streamed: after this many chunks, stop sending and hold the response open (a stream in flight). */
      holdAfterChunks?: number;
    }
  | { status: number; headers?: Record<string, string>; message?: string };

/** What the script sees of a request: its body, its turn (the assistant messages it carries) and its number. */
export interface ServerRequest {
  body: ChatBody;
  turn: number;
  n: number;
  headers: IncomingMessage["headers"];
}

export interface ChatBody {
  model: string;
  stream?: boolean;
  messages: { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  [option: string]: unknown;
}

export interface OpenAiServer {
  baseURL: string;
  port: number;
  requests: ServerRequest[];
  /** Resolves once a streamed response is held open after `holdAfterChunks` chunks. */
  held(): Promise<void>;
  /** Chunks sent so far on every stream. */
  chunksSent: number;
  /** Streams the client closed before their end (an aborted request). */
  clientsGone: number;
  close(): Promise<void>;
}

/** Starts the server on an ephemeral port (or `port`), answering each request with `script(request)`. */
export async function startOpenAiServer(
  script: (request: ServerRequest) => ServerTurn,
  options: {
    port?: number;
    /** As OpenAI's API does: a streamed response carries its usage chunk only when the request asks (`stream_options.include_usage`). */
    usageOnlyWhenAsked?: boolean;
  } = {},
): Promise<OpenAiServer> {
  const requests: ServerRequest[] = [];
  const open = new Set<ServerResponse>();
  let onHeld: (() => void) | undefined;
  let heldOnce = false;
  const state = { chunksSent: 0, clientsGone: 0 };
  const server: Server = createServer(async (req, res) => {
    // A page on another loopback origin (the browser specs) may call it: CORS, preflight included.
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "*");
    res.setHeader("access-control-allow-methods", "POST, OPTIONS");
    if (req.method === "OPTIONS") {
      res.writeHead(204).end();
      return;
    }
    const posted = await postedJson(req, res, "/chat/completions");
    if (posted === undefined) return;
    const body = posted as ChatBody;
    const request: ServerRequest = {
      body,
      turn: body.messages.filter((m) => m.role === "assistant").length,
      n: requests.length,
      headers: req.headers,
    };
    requests.push(request);
    const turn = script(request);
    if ("status" in turn) {
      res.writeHead(turn.status, { "content-type": "application/json", ...turn.headers });
      res.end(
        JSON.stringify({
          error: {
            message: turn.message ?? `scripted status ${turn.status}`,
            type: "scripted",
            code: String(turn.status),
          },
        }),
      );
      return;
    }
    const id = `chatcmpl-${request.n}`;
    const toolCalls = (turn.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_srv_${request.n}_${i}`,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
    const finish = toolCalls.length ? "tool_calls" : "stop";
    const usage = {
      prompt_tokens: turn.usage?.prompt ?? 10,
      completion_tokens: turn.usage?.completion ?? 5,
      total_tokens: (turn.usage?.prompt ?? 10) + (turn.usage?.completion ?? 5),
    };
    if (!body.stream) {
      const message = {
        role: "assistant",
        content: turn.text ?? null,
        ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
        ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    open.add(res);
    res.on("close", () => {
      open.delete(res);
      if (!res.writableFinished) state.clientsGone++;
    });
    const deltas: Record<string, unknown>[] = [{ role: "assistant", content: "" }];
    const size = turn.chunkChars ?? 4;
    for (let i = 0; i < (turn.reasoning ?? "").length; i += size)
      deltas.push({ reasoning_content: turn.reasoning!.slice(i, i + size) });
    for (let i = 0; i < (turn.text ?? "").length; i += size) deltas.push({ content: turn.text!.slice(i, i + size) });
    toolCalls.forEach((call, index) => {
      deltas.push({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
      });
      for (let i = 0; i < call.function.arguments.length; i += size)
        deltas.push({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(i, i + size) } }] });
    });
    const send = (data: unknown) => {
      res.write(`data: ${JSON.stringify(data)}\n\n`);
      state.chunksSent++;
    };
    for (const [k, delta] of deltas.entries()) {
      if (turn.holdAfterChunks !== undefined && k >= turn.holdAfterChunks) {
        heldOnce = true;
        onHeld?.();
        return; // held open until the client goes away or the server closes
      }
      send({
        id,
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: null }],
      });
      await new Promise((r) => setImmediate(r));
    }
    send({
      id,
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, delta: {}, finish_reason: finish }],
    });
    const asked = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    if (!options.usageOnlyWhenAsked || asked)
      send({ id, object: "chat.completion.chunk", created: 1_700_000_000, model: body.model, choices: [], usage });
    res.write("data: [DONE]\n\n");
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get chunksSent() {
      return state.chunksSent;
    },
    get clientsGone() {
      return state.clientsGone;
    },
    held: () => (heldOnce ? Promise.resolve() : new Promise<void>((resolve) => (onHeld = resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A server script from a list of turns by the request's turn (the same in every process), errors first by request number. */
export function byTurn(turns: ServerTurn[]): (request: ServerRequest) => ServerTurn {
  return ({ turn }) => turns[turn] ?? { status: 500, message: `no turn ${turn} scripted` };
}
