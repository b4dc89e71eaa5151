// The CLI speaks on a control socket only once it knows the socket is its own user's app, and takes
// nothing a socket answers on trust: a reply that is not a control reply is a typed error, never a crash.
import { chown, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { controlSocketPath, MAX_CONTROL_LINE_BYTES } from "../../adapters/fs/index.js";
import { cli, makeJournal, type Journal } from "./support.js";

let journal: Journal;
beforeAll(async () => void (journal = await makeJournal()));
afterAll(() => rm(journal.dir, { recursive: true, force: true }));

const connections = new Set<Socket>();

/** A server on the journal's socket path that is not the app: it records what it is told and answers `reply`. */
function impostor(reply: (line: string) => string): Promise<{ server: Server; received: string[] }> {
  const received: string[] = [];
  const server = createServer((socket) => {
    connections.add(socket);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received.push(chunk);
      socket.write(reply(chunk));
    });
    socket.on("error", () => undefined);
  });
  return new Promise((resolve) => server.listen(controlSocketPath(journal.dir), () => resolve({ server, received })));
}

let running: Server | undefined;
afterEach(async () => {
  // Its connections end with it: a client left waiting must not hold the test up.
  for (const socket of connections) socket.destroy();
  await new Promise<void>((resolve) => (running ? running.close(() => resolve()) : resolve()));
  running = undefined;
});

const SEND = ["send", "research-unfinished", '{"type":"USER_MESSAGE","text":"the launch codes"}', "--dir"];

describe("the CLI checks whose socket it is before it speaks", () => {
  it.runIf(process.getuid?.() === 0)("a socket another user bound is refused, and told nothing", async () => {
    const { server, received } = await impostor(
      (line) => `${JSON.stringify({ id: JSON.parse(line).id, ok: true, status: "active" })}\n`,
    );
    running = server;
    await chown(controlSocketPath(journal.dir), 65534, 65534);
    const sent = await cli([...SEND, journal.dir, "--json"]);
    expect(sent.code).toBe(1);
    expect(JSON.parse(sent.stderr).error).toMatchObject({
      code: "LOOM_CONTROL_SOCKET",
      message: expect.stringContaining("owned by uid 65534"),
    });
    expect(sent.stdout).toBe("");
    expect(received).toEqual([]);
  });
});

describe("the CLI validates every reply", () => {
  it.each([
    ["a line that is not JSON", () => "garbage\n"],
    ["JSON that is not a reply", () => "[1,2,3]\n"],
    [
      "a result without a status",
      (line: string) => `${JSON.stringify({ id: JSON.parse(line).id, ok: true, status: 7 })}\n`,
    ],
    ["an error that is not one", (line: string) => `${JSON.stringify({ id: JSON.parse(line).id, error: "no" })}\n`],
    ["a line that never ends", () => "x".repeat(MAX_CONTROL_LINE_BYTES + 1)],
  ])("%s: a typed error, no stack trace", async (_label, reply) => {
    running = (await impostor(reply)).server;
    const sent = await cli([...SEND, journal.dir]);
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain("loomwork send: the app serving the control socket");
    expect(sent.stderr).toContain("not a control reply");
    expect(sent.stderr).not.toMatch(/\n\s+at /);
    expect(sent.stdout).toBe("");
    const json = await cli([...SEND, journal.dir, "--json"]);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: "LOOM_CONTROL_REPLY" });
  });
});
