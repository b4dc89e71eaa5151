// A WebSocket inspector server on 127.0.0.1 (a random port) that keeps every message it receives,
// as the Stately inspector's bridge would.
import { WebSocketServer } from "ws";

export interface InspectorServer {
  url: string;
  messages: Record<string, any>[];
  /** Resolves once `predicate` holds for the messages received so far. */
  until(predicate: (messages: Record<string, any>[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function inspectorServer(): Promise<InspectorServer> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const messages: Record<string, any>[] = [];
  server.on("connection", (socket) => socket.on("message", (data) => messages.push(JSON.parse(String(data)))));
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    messages,
    async until(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(messages)) {
        if (Date.now() > deadline)
          throw new Error(`inspector server: condition not met after ${timeoutMs} ms (${messages.length} messages)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
