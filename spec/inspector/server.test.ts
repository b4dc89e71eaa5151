// loomwork/inspector's createInspectorServer (issue 36): bound to 127.0.0.1 unless told otherwise, the
// runtime's events to viewers only, every actor's definition kept for a late viewer, no process spawned
// unless asked.
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";

const spawned = vi.hoisted(() => [] as { file: string; args: readonly string[] }[]);
vi.mock("node:child_process", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:child_process")>();
  const record = (file: string, args?: readonly string[]) => void spawned.push({ file, args: args ?? [] });
  return {
    ...original,
    exec: (command: string) => record(command),
    execFile: (file: string, args?: readonly string[]) => record(file, args),
    spawn: (file: string, args?: readonly string[]) => record(file, args),
  };
});

import { createInspectorServer, VIEWER_PATH, type InspectorServer } from "../../adapters/inspector/index.js";

const servers: InspectorServer[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await Promise.all(servers.splice(0).map((server) => server.close()));
  spawned.length = 0;
});

async function start(options: Parameters<typeof createInspectorServer>[0] = {}): Promise<InspectorServer> {
  const server = await createInspectorServer({ port: 0, ...options });
  servers.push(server);
  return server;
}

interface Client {
  socket: WebSocket;
  received: Record<string, unknown>[];
  send(message: Record<string, unknown>): void;
}

async function connect(url: string): Promise<Client> {
  const socket = new WebSocket(url);
  sockets.push(socket);
  const received: Record<string, unknown>[] = [];
  socket.on("message", (data) => received.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  return { socket, received, send: (message) => socket.send(JSON.stringify(message)) };
}

const until = async (predicate: () => boolean): Promise<void> => {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not met in 5 s");
    await new Promise((r) => setTimeout(r, 10));
  }
};
const settle = () => new Promise((r) => setTimeout(r, 100));

const actor = (sessionId: string) => ({ type: "@xstate.actor", sessionId, definition: { id: sessionId, states: {} } });
const snapshot = (sessionId: string, n: number) => ({ type: "@xstate.snapshot", sessionId, snapshot: { n } });

describe("createInspectorServer: binding", () => {
  it("listens on 127.0.0.1 by default", async () => {
    const server = await start();
    expect(server.address.host).toBe("127.0.0.1");
    expect(server.url).toBe(`ws://127.0.0.1:${server.address.port}`);
  });

  it("listens on the host it is given", async () => {
    const server = await start({ host: "0.0.0.0" });
    expect(server.address.host).toBe("0.0.0.0");
  });
});

describe("createInspectorServer: relay", () => {
  it("sends an app's events to viewers, never to another app's connection", async () => {
    const server = await start();
    const viewer = await connect(server.url + VIEWER_PATH);
    const app = await connect(server.url);
    const otherApp = await connect(server.url);
    app.send(snapshot("loom:a", 1));
    await until(() => viewer.received.length === 1);
    await settle();
    expect(viewer.received).toEqual([snapshot("loom:a", 1)]);
    expect(otherApp.received).toEqual([]);
    expect(app.received).toEqual([]);
  });

  it("never sends a viewer's message to another viewer or to an app", async () => {
    const server = await start();
    const viewer = await connect(server.url + VIEWER_PATH);
    const otherViewer = await connect(server.url + VIEWER_PATH);
    const app = await connect(server.url);
    viewer.send(snapshot("loom:forged", 1));
    await settle();
    const late = await connect(server.url + VIEWER_PATH);
    await settle();
    expect(otherViewer.received).toEqual([]);
    expect(app.received).toEqual([]);
    expect(late.received).toEqual([]);
  });
});

describe("createInspectorServer: a late viewer", () => {
  it("gets every actor's definition however many events came after, and the recent ones", async () => {
    const server = await start({ historySize: 200 });
    const app = await connect(server.url);
    app.send(actor("loom:a"));
    for (let n = 0; n < 150; n++) app.send(snapshot("loom:a", n));
    app.send(actor("loom:b"));
    for (let n = 150; n < 500; n++) app.send(snapshot("loom:b", n));
    const probe = await connect(server.url + VIEWER_PATH);
    await until(() => probe.received.length === 202);
    await settle();
    const late = await connect(server.url + VIEWER_PATH);
    await until(() => late.received.length === 202);
    expect(late.received.slice(0, 2)).toEqual([actor("loom:a"), actor("loom:b")]);
    expect(late.received.slice(2)).toEqual(Array.from({ length: 200 }, (_, i) => snapshot("loom:b", 300 + i)));
  });
});

describe("createInspectorServer: opening a browser", () => {
  it("spawns no process by default", async () => {
    await start();
    expect(spawned).toEqual([]);
  });

  it("opens the page when asked (open: true)", async () => {
    const server = await start({ open: true });
    expect(spawned).toHaveLength(1);
    expect(spawned[0]!.args).toContain(server.pageUrl);
  });
});

describe("createInspectorServer: the viewer page", () => {
  it("writes the url option into the page as an attribute value: a quote or a tag in it stays text", async () => {
    const server = await start({ url: 'https://example.test/inspect?a=1&b="x"><script>alert(1)</script>' });
    const page = await (await fetch(server.pageUrl)).text();
    expect(page).not.toContain("<script>alert(1)</script>");
    expect(page).toContain(
      'src="https://example.test/inspect?a=1&amp;b=&quot;x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"',
    );
  });
});
