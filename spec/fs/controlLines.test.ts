// The control socket reads lines of bounded length, each byte looked at once: a peer that never sends a
// newline is cut off at the cap instead of growing the app's memory and event-loop time without limit.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fsStores,
  MAX_CONTROL_LINE_BYTES,
  serveControl,
  type ControlServer,
  type FsStores,
} from "../../adapters/fs/index.js";
import { createApp, defineConfig, type App } from "../../index.js";
import { removeTempDirs, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

/** Connects, writes `chunks` in order, and resolves with every reply line and whether the server closed the connection. */
function exchange(
  path: string,
  chunks: (string | Buffer)[],
  until: (replies: Record<string, unknown>[]) => boolean,
): Promise<{ replies: Record<string, unknown>[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const replies: Record<string, unknown>[] = [];
    let buffered = "";
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ replies, closed });
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        replies.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
        buffered = buffered.slice(newline + 1);
      }
      if (until(replies)) finish(false);
    });
    // The server closing on us while we still write is what a cut-off looks like from here.
    socket.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? finish(true) : reject(error),
    );
    socket.on("close", () => finish(true));
    socket.on("connect", async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        if (!socket.write(chunk)) await new Promise((r) => socket.once("drain", r));
      }
    });
  });
}

describe("control socket lines", () => {
  let stores: FsStores;
  let app: App;
  let control: ControlServer;
  const seen: unknown[] = [];

  beforeAll(async () => {
    stores = await fsStores({ dir: await tempDir("lines") });
    app = createApp(defineConfig({ stores, effects: {} }));
    control = await serveControl(app, {
      dir: stores.dir,
      allow: (request) => (seen.push(request), false),
    });
  });
  afterAll(async () => {
    await control.close();
    await app.close();
    await stores.close();
  });

  it("a line longer than the cap gets one error and the connection is closed; nothing of it reaches the app", async () => {
    const endless = Buffer.alloc(64 * 1024, "x");
    const chunks = Array.from({ length: Math.ceil(MAX_CONTROL_LINE_BYTES / endless.length) + 4 }, () => endless);
    const valid = `\n${JSON.stringify({ id: 9, op: "stop", executionId: "after-the-flood" })}\n`;
    const { replies, closed } = await exchange(control.path, [...chunks, valid], (r) => r.length >= 2);
    expect(replies[0]).toMatchObject({
      id: 0,
      error: {
        code: "LOOM_CONTROL_REFUSED",
        message: expect.stringContaining(`longer than ${MAX_CONTROL_LINE_BYTES} bytes`),
      },
    });
    expect(replies).toHaveLength(1);
    expect(closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it("a long line under the cap, cut into many chunks across multi-byte characters, arrives whole", async () => {
    const reason = "é🦉".repeat(200_000);
    const line = Buffer.from(`${JSON.stringify({ id: 3, op: "stop", executionId: "owl", reason })}\n`, "utf8");
    expect(line.length).toBeLessThan(MAX_CONTROL_LINE_BYTES);
    const chunks: Buffer[] = [];
    for (let at = 0; at < line.length; at += 4093) chunks.push(line.subarray(at, at + 4093));
    const { replies } = await exchange(control.path, chunks, (r) => r.length >= 1);
    expect(replies).toEqual([{ id: 3, error: expect.objectContaining({ code: "LOOM_CONTROL_REFUSED" }) }]);
    expect(seen).toEqual([{ op: "stop", executionId: "owl" }]);
    seen.length = 0;
  });
});
