// The OpenAI Responses API (`POST /v1/responses`) on 127.0.0.1 for the provider tests, beside the chat
// completions server (openaiServer.ts): output items (reasoning with an id and encrypted content, a message,
// function calls), plain and SSE-streamed, as @ai-sdk/openai's `openai(id)` reads them. Every request
// body is kept for assertions.
import { postedJson } from "./http.js";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted response: its output items, in order. */
export interface ResponsesTurn {
  /** A reasoning item: its summary text, and the encrypted content the server returns when asked. */
  reasoning?: { summary: string; encrypted: string };
  text?: string;
  toolCalls?: { callId: string; name: string; arguments: string }[];
  usage?: { input: number; output: number; reasoning?: number };
}

export interface ResponsesBody {
  model: string;
  stream?: boolean;
  input: Record<string, unknown>[];
  store?: boolean;
  include?: string[];
  [option: string]: unknown;
}

export interface ResponsesServer {
  baseURL: string;
  requests: ResponsesBody[];
  close(): Promise<void>;
}

/** The ids the server gives request `n`'s items: the reasoning item, the message, the i-th function call. */
export const responseIds = (n: number) => ({
  response: `resp_${n}`,
  reasoning: `rs_${n}`,
  message: `msg_${n}`,
  call: (i: number) => `fc_${n}_${i}`,
});

/** Starts the server on an ephemeral port, answering request `n` with `script(body, n)`. */
export async function startResponsesServer(
  script: (body: ResponsesBody, n: number) => ResponsesTurn,
): Promise<ResponsesServer> {
  const requests: ResponsesBody[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    const posted = await postedJson(req, res, "/responses");
    if (posted === undefined) return;
    const body = posted as ResponsesBody;
    const n = requests.length;
    requests.push(body);
    const turn = script(body, n);
    const ids = responseIds(n);
    // The encrypted content is returned only when the request includes it, as OpenAI's API does.
    const withEncrypted = body.include?.includes("reasoning.encrypted_content") === true;
    const reasoningItem = turn.reasoning
      ? {
          type: "reasoning",
          id: ids.reasoning,
          encrypted_content: withEncrypted ? turn.reasoning.encrypted : null,
          summary: [{ type: "summary_text", text: turn.reasoning.summary }],
        }
      : undefined;
    const messageItem = turn.text
      ? {
          type: "message",
          role: "assistant",
          id: ids.message,
          status: "completed",
          content: [{ type: "output_text", text: turn.text, annotations: [] }],
        }
      : undefined;
    const callItems = (turn.toolCalls ?? []).map((c, i) => ({
      type: "function_call",
      id: ids.call(i),
      call_id: c.callId,
      name: c.name,
      arguments: c.arguments,
      status: "completed",
    }));
    const output = [...(reasoningItem ? [reasoningItem] : []), ...(messageItem ? [messageItem] : []), ...callItems];
    const usage = {
      input_tokens: turn.usage?.input ?? 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: turn.usage?.output ?? 5,
      output_tokens_details: { reasoning_tokens: turn.usage?.reasoning ?? 0 },
      total_tokens: (turn.usage?.input ?? 10) + (turn.usage?.output ?? 5),
    };
    const response = { id: ids.response, object: "response", created_at: 1_700_000_000, model: body.model };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...response, status: "completed", output, usage, incomplete_details: null }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    open.add(res);
    res.on("close", () => open.delete(res));
    let sequence = 0;
    const send = (event: Record<string, unknown>) =>
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`);
    send({ type: "response.created", response: { ...response, status: "in_progress" } });
    output.forEach((item, index) => {
      if (item.type === "reasoning" && reasoningItem) {
        send({ type: "response.output_item.added", output_index: index, item: { ...reasoningItem, summary: [] } });
        send({
          type: "response.reasoning_summary_part.added",
          item_id: item.id,
          output_index: index,
          summary_index: 0,
        });
        send({
          type: "response.reasoning_summary_text.delta",
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          delta: turn.reasoning!.summary,
        });
        send({ type: "response.reasoning_summary_part.done", item_id: item.id, output_index: index, summary_index: 0 });
        send({ type: "response.output_item.done", output_index: index, item: reasoningItem });
      } else if (item.type === "message" && messageItem) {
        send({ type: "response.output_item.added", output_index: index, item: { ...messageItem, content: [] } });
        send({ type: "response.output_text.delta", item_id: item.id, output_index: index, delta: turn.text });
        send({ type: "response.output_item.done", output_index: index, item: messageItem });
      } else if ("call_id" in item) {
        send({ type: "response.output_item.added", output_index: index, item: { ...item, arguments: "" } });
        send({
          type: "response.function_call_arguments.delta",
          item_id: item.id,
          output_index: index,
          delta: item.arguments,
        });
        send({ type: "response.output_item.done", output_index: index, item });
      }
    });
    send({ type: "response.completed", response: { ...response, status: "completed", usage } });
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
