// What the tests' HTTP servers on 127.0.0.1 share: a POST to one route, its JSON body read, anything else a 404.
import type { IncomingMessage, ServerResponse } from "node:http";

/** The JSON body of a POST whose url ends with `route`; anything else is answered 404 (OpenAI's error shape) and gives undefined. */
export async function postedJson(req: IncomingMessage, res: ServerResponse, route: string): Promise<unknown> {
  if (req.method !== "POST" || !req.url?.endsWith(route)) {
    res
      .writeHead(404, { "content-type": "application/json" })
      .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
    return undefined;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.from(chunk));
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}
