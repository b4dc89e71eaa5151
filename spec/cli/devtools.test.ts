// loomwork devtools as a server: on 127.0.0.1 only, answering only requests addressed to it, taking a decision
// only from the page it served (its token), for a call that waits; a missing journal or a taken port is said.
import { request } from "node:http";
import { createServer } from "node:net";
import { networkInterfaces } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { kettle, runKettle } from "../devtools/machines.js";
import { createApp, defineConfig } from "../../index.js";
import { cli, spawnCli, type RunningCli } from "./support.js";

let dir: string;
let server: RunningCli;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loomwork-devtools-cli-"));
  const stores = await fsStores({ dir });
  const app = createApp(defineConfig({ stores, effects: {}, logics: [kettle] }));
  await runKettle(app, "kettle-1");
  await app.close();
  await stores.close();
  server = spawnCli(["devtools", "--dir", dir, "--json"]);
  await server.waitFor(/"url"/, 60_000);
  port = Number(/127\.0\.0\.1:(\d+)/.exec(server.stdout)![1]);
}, 120_000);

afterAll(async () => {
  server?.kill();
  await server?.exited;
  if (dir) await rm(dir, { recursive: true, force: true });
});

function call(
  path: string,
  options: { host?: string; address?: string; method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: options.address ?? "127.0.0.1",
        port,
        path,
        method: options.method ?? "GET",
        headers: { host: options.host ?? `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("loomwork devtools", () => {
  it("serves the page and the model of a journal to requests addressed to 127.0.0.1 or localhost only", async () => {
    const page = await call("/");
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="assets/client.js">');
    expect((await call("/", { host: `localhost:${port}` })).status).toBe(200);
    // A DNS name rebound to 127.0.0.1, or another site's page, is refused.
    const rebound = await call("/api/executions", { host: `attacker.example:${port}` });
    expect(rebound.status).toBe(421);
    const model = JSON.parse((await call("/api/model?id=kettle-1")).body) as { graph: { from: string }; head: number };
    expect(model).toMatchObject({ head: 9, graph: { from: "journal" } });
    expect((await call("/api/model?id=nope")).status).toBe(404);
  });

  it("listens on 127.0.0.1 only", async () => {
    const other = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    if (!other) return; // a machine with loopback only: nothing else to reach
    await expect(call("/", { address: other })).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("takes a decision only from the page it served, as JSON, for a call that waits", async () => {
    const body = JSON.stringify({ executionId: "kettle-1", toolCallId: "call_x", approved: true });
    const json = { "content-type": "application/json" };
    expect((await call("/api/decide", { method: "POST", headers: json, body })).status).toBe(403);
    const token = /"token":"([0-9a-f]+)"/.exec((await call("/")).body)![1]!;
    const withToken = { ...json, "x-loomwork-devtools": token };
    expect(
      (await call("/api/decide", { method: "POST", headers: { "x-loomwork-devtools": token }, body })).status,
    ).toBe(403);
    const notWaiting = await call("/api/decide", { method: "POST", headers: withToken, body });
    expect(notWaiting.status).toBe(404);
    expect(notWaiting.body).toContain('no tool call \\"call_x\\" waits for approval in \\"kettle-1\\"');
    expect((await call("/api/decide", { method: "POST", headers: withToken, body: "{" })).status).toBe(400);
  });

  it("says when the journal is missing (exit 3) or the port is taken (exit 1), and documents its options", async () => {
    const missing = await cli(["devtools", "--dir", join(dir, "nowhere")]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("no journal directory");
    const taken = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => taken.once("listening", resolve));
    const address = taken.address();
    try {
      const busy = await cli([
        "devtools",
        "--dir",
        dir,
        "--port",
        String(typeof address === "object" && address ? address.port : 0),
      ]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/port \d+ on 127\.0\.0\.1 is in use/);
    } finally {
      taken.close();
    }
    const help = await cli(["devtools", "--help"]);
    expect(help.code).toBe(0);
    for (const option of ["--port <n>", "--logic <module>", "--poll-ms <ms>", "--dir <dir>"])
      expect(help.stdout).toContain(option);
  }, 60_000);
});
