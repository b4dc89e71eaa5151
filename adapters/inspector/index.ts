// loomwork/inspector: a WebSocket server between a Node app's inspector (createWebSocketInspector of
// @statelyai/inspect) and the Stately inspector page, in place of @statelyai/inspect/server's. Every
// message holds prompts and tool outputs, so it listens on 127.0.0.1 unless told otherwise, sends the
// runtime's events to viewers only (never one client's messages to another client of its kind), keeps
// every actor's definition for a late viewer apart from the bounded history, and starts no process
// unless asked. `ws` comes with @statelyai/inspect (an optional peer dependency of this entry point).
import { execFile } from "node:child_process";
import http from "node:http";
import { platform } from "node:os";
import { WebSocket, WebSocketServer } from "ws";

/** Options of `createInspectorServer`. */
export interface InspectorServerOptions {
  /** The port of the HTTP page and the WebSocket; 0 picks a free one. @defaultValue 8080 */
  port?: number;
  /**
   * The interface to listen on. Every message holds the machines' context: prompts, model replies and
   * tool outputs. Widen it (`"0.0.0.0"`, `"::"`) only on a network you trust. @defaultValue `"127.0.0.1"`
   */
  host?: string;
  /** Open the page in the default browser (spawns `open`, `start` or `xdg-open`). @defaultValue false */
  open?: boolean;
  /** The inspector UI the page embeds. @defaultValue `"https://stately.ai/inspect"` */
  url?: string;
  /** How many recent events (beside every actor's definition) a viewer that connects late gets. @defaultValue 200 */
  historySize?: number;
}

/** A running inspector server. */
export interface InspectorServer {
  /** The URL to hand `createWebSocketInspector` (`ws://host:port`). */
  url: string;
  /** The viewer page (`http://host:port`). */
  pageUrl: string;
  /** The address the server is bound to. */
  address: { host: string; port: number };
  /** Closes every connection and the server. */
  close(): Promise<void>;
}

/** The path the viewer page connects to; any other path is an app's inspector (a source of events). */
export const VIEWER_PATH = "/viewer";

/**
 * Starts the inspector server: apps connect to `url`, the page at `pageUrl` shows what they send.
 *
 * @example
 * ```ts
 * const server = await createInspectorServer({ open: true });
 * const inspector = createWebSocketInspector({ url: server.url });
 * ```
 */
export async function createInspectorServer(options: InspectorServerOptions = {}): Promise<InspectorServer> {
  const host = options.host ?? "127.0.0.1";
  const historySize = options.historySize ?? 200;
  const inspectorUrl = options.url ?? "https://stately.ai/inspect";
  const httpServer = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(viewerPage(inspectorUrl));
  });
  const wss = new WebSocketServer({ server: httpServer });
  const viewers = new Set<WebSocket>();
  // An actor's registration carries its machine's definition: kept for every late viewer, whatever came after.
  const definitions = new Map<string, string>();
  const history: string[] = [];

  wss.on("connection", (socket, request) => {
    if (new URL(request.url ?? "/", "http://localhost").pathname === VIEWER_PATH) {
      viewers.add(socket);
      socket.on("close", () => viewers.delete(socket));
      for (const message of definitions.values()) socket.send(message);
      for (const message of history) socket.send(message);
      return; // a viewer's messages go nowhere
    }
    socket.on("message", (data) => {
      const message = String(data);
      const event = parse(message);
      if (!event) return;
      if (event.type === "@xstate.actor" && typeof event.sessionId === "string")
        definitions.set(event.sessionId, message);
      else {
        history.push(message);
        if (history.length > historySize) history.shift();
      }
      for (const viewer of viewers) if (viewer.readyState === WebSocket.OPEN) viewer.send(message);
    });
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(options.port ?? 8080, host, () => resolve());
  });
  const bound = httpServer.address();
  if (bound === null || typeof bound === "string")
    throw new Error(`inspector server: not bound to a TCP port (${String(bound)})`);
  const { address, port } = bound;
  const authority = `${address.includes(":") ? `[${address}]` : address}:${port}`;
  const pageUrl = `http://${authority}`;
  if (options.open) openInBrowser(pageUrl);
  return {
    url: `ws://${authority}`,
    pageUrl,
    address: { host: address, port },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        httpServer.close(() => resolve());
      }),
  };
}

function parse(message: string): { type?: unknown; sessionId?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(message);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

function openInBrowser(url: string): void {
  const os = platform();
  // execFile, no shell: the URL is an argument, never parsed as a command line.
  if (os === "win32") execFile("cmd", ["/c", "start", "", url], () => {});
  else execFile(os === "darwin" ? "open" : "xdg-open", [url], () => {});
}

// The `url` option as an HTML attribute value: a quote or an angle bracket in it cannot end the attribute or the tag.
function htmlAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function viewerPage(inspectorUrl: string): string {
  return `<!DOCTYPE html>
<html>
<head>
  <title>Stately Inspector</title>
  <style>* { margin: 0; padding: 0; } html, body { height: 100%; } iframe { width: 100%; height: 100%; border: none; }</style>
</head>
<body>
  <iframe id="inspector" src="${htmlAttribute(inspectorUrl)}"></iframe>
  <script>
    const iframe = document.getElementById("inspector");
    const buffer = [];
    let connected = false;
    window.addEventListener("message", (e) => {
      if (e.data && e.data.type === "@statelyai.connected") {
        connected = true;
        for (const event of buffer) iframe.contentWindow.postMessage(event, "*");
        buffer.length = 0;
      }
    });
    const ws = new WebSocket("ws://" + location.host + ${JSON.stringify(VIEWER_PATH)});
    ws.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (connected) iframe.contentWindow.postMessage(data, "*");
      else buffer.push(data);
    };
  </script>
</body>
</html>`;
}
