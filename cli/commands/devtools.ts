// loomwork devtools [executionId] --dir <journal> [--port <n>] [--logic <module>]: serves the devtools page
// (adapters/devtools/) on 127.0.0.1 only, over a closed journal or live beside the app that writes it. The
// journal is read afresh on every request; a decision on an approval goes the way `loomwork approve` goes
// (the app's control socket, else journaled with --logic).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { AnyStateMachine } from "xstate";
import { TOOL_APPROVAL_EVENT } from "../../actors/agents/approvals.js";
import { fsStores } from "../../adapters/fs/index.js";
import { loadModel, loadTree } from "../../adapters/devtools/load.js";
import type { DevtoolsModel } from "../../adapters/devtools/view.js";
import { command, type Context } from "../context.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { openJournal } from "../journal.js";
import { operate } from "../operate.js";

/** The page's modules, served as they are (each imports only the others). */
const MODULES = new Set(["client", "page", "layout", "view"]);
const MAX_BODY = 16 * 1024;

export const devtools = command(
  "devtools",
  "Serve the devtools page on 127.0.0.1: statecharts, the current state live, the timeline, time travel by seq, the tree and the approvals.",
  {
    args: { "[executionId]": "the execution shown first (default: the first running one)" },
    options: {
      port: {
        type: "string",
        value: "<n>",
        description: "the port to listen on, on 127.0.0.1 only (default 0: a free port, printed)",
      },
      logic: {
        type: "string",
        value: "<module>",
        description:
          "a module exporting the machines: their own statecharts, and each state's context by replaying the journal with nothing run",
      },
      "poll-ms": {
        type: "string",
        value: "<ms>",
        description: "how often the page re-reads the journal to follow it live (default 1000; 0 reads once)",
      },
    },
    details: [
      "Prints the page's URL and serves until Ctrl-C. Needs no network: the page, its code and the layout engine (elkjs) are served " +
        "from the installed package. It listens on 127.0.0.1 only and answers only requests addressed to 127.0.0.1 or localhost.",
      "Read-only, beside a running app as over a closed journal: the journal is read afresh as it grows. Without --logic the " +
        "statechart is inferred from the journal's transitions and the states carry no context.",
      "Approve / Deny on the page go the way `loomwork approve` and `loomwork deny` go: through the app that holds the journal (its " +
        "control socket, serveControl), else journaled by the CLI with --logic.",
    ],
    examples: [
      "loomwork devtools --dir .loomwork",
      "loomwork devtools research-1 --dir .loomwork --logic stories/support/researchAgent.ts --port 7380",
    ],
  },
  async (ctx) => {
    const port = Number(ctx.values.port ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be a port number, 0 to 65535; got "${String(ctx.values.port)}"`);
    const pollMs = Number(ctx.values["poll-ms"] ?? 1000);
    if (!Number.isFinite(pollMs) || pollMs < 0)
      throw new UsageError(`--poll-ms must be 0 or more; got "${String(ctx.values["poll-ms"])}"`);
    // The journal must exist (a clear "not found" now, not on the first request).
    await (await openJournal(ctx.dir, { readOnly: true })).close();
    const logics =
      typeof ctx.values.logic === "string" ? await (await import("../replay.js")).loadLogics(ctx.values.logic) : [];
    const server = devtoolsServer(ctx, logics, { pollMs, executionId: ctx.positionals[0] });
    const url = await new Promise<string>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          error.code === "EADDRINUSE"
            ? new CliError(
                `port ${port} on 127.0.0.1 is in use`,
                EXIT.failure,
                "Pass another --port, or 0 for a free one.",
              )
            : error,
        ),
      );
      server.listen(port, "127.0.0.1", () => {
        const address = server.address();
        resolve(`http://127.0.0.1:${typeof address === "object" && address ? address.port : port}/`);
      });
    });
    if (ctx.json) ctx.printJson({ url, dir: ctx.dir, logic: logics.map((l) => l.id) });
    else ctx.out(`loomwork devtools on ${url} (journal ${ctx.dir}); Ctrl-C to stop`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    // A browser keeps its connections open: close them, or the server waits for them.
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  },
);

function devtoolsServer(ctx: Context, logics: AnyStateMachine[], page: { pollMs: number; executionId?: string }) {
  const token = randomBytes(16).toString("hex");
  const here = fileURLToPath(new URL("../../adapters/devtools/", import.meta.url));
  const elkPath = createRequire(import.meta.url).resolve("elkjs/lib/elk.bundled.js");
  // Each request reads the journal as it is now: a read-only open sees what the app appended since.
  const withJournal = async <T>(read: (stores: Awaited<ReturnType<typeof fsStores>>) => Promise<T>): Promise<T> => {
    const stores = await fsStores({ dir: ctx.dir, readOnly: true });
    try {
      return await read(stores);
    } finally {
      await stores.close();
    }
  };
  let cached: { key: string; model: DevtoolsModel } | undefined;
  const model = (executionId: string) =>
    withJournal(async (stores) => {
      const info = await stores.events.getExecution(executionId);
      if (!info) throw new CliError(`no execution "${executionId}" in ${ctx.dir}`, EXIT.notFound);
      const key = `${executionId}@${info.head}`;
      if (cached?.key !== key) cached = { key, model: await loadModel(stores.events, executionId, { logics }) };
      return cached.model;
    });

  const html = () =>
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>loomwork devtools</title>
<link rel="icon" href="data:,">
</head>
<body style="margin:0;background:#ffffff">
<main id="devtools"><p>Loading the devtools…</p></main>
<script type="application/json" id="loom-boot">${JSON.stringify({
      token,
      title: `loomwork devtools: ${ctx.dir}`,
      pollMs: page.pollMs,
      ...(page.executionId ? { executionId: page.executionId } : {}),
    }).replace(/</g, "\\u003c")}</script>
<script src="elk.js"></script>
<script type="module" src="assets/client.js"></script>
</body>
</html>
`;

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer) => {
    res.writeHead(status, {
      "content-type": type,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "content-security-policy":
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
    });
    res.end(body);
  };
  const sendJson = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, "application/json; charset=utf-8", JSON.stringify(value));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // Another site's page (or a DNS name rebound to 127.0.0.1) reaches this port too: only requests addressed to it are served.
    const host = req.headers.host ?? "";
    const port = (req.socket.localPort ?? 0).toString();
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      return sendJson(res, 421, { error: `requests must be addressed to 127.0.0.1:${port}` });
    const url = new URL(req.url ?? "/", `http://${host}`);
    if (req.method === "GET" && url.pathname === "/") return send(res, 200, "text/html; charset=utf-8", html());
    if (req.method === "GET" && url.pathname === "/elk.js")
      return send(res, 200, "text/javascript; charset=utf-8", await readFile(elkPath));
    const asset = /^\/assets\/([a-z]+)\.js$/.exec(url.pathname)?.[1];
    if (req.method === "GET" && asset && MODULES.has(asset))
      return send(res, 200, "text/javascript; charset=utf-8", await moduleSource(here, asset));
    if (req.method === "GET" && url.pathname === "/api/executions")
      return sendJson(res, 200, await withJournal((stores) => loadTree(stores.events)));
    if (req.method === "GET" && url.pathname === "/api/model")
      return sendJson(res, 200, await model(url.searchParams.get("id") ?? ""));
    if (req.method === "POST" && url.pathname === "/api/decide") {
      if (
        req.headers["x-loomwork-devtools"] !== token ||
        !/^application\/json\b/.test(req.headers["content-type"] ?? "")
      )
        return sendJson(res, 403, { error: "a decision must come from the devtools page this server served" });
      const body = await readBody(req);
      const { executionId, toolCallId, approved, reason } = body as Record<string, unknown>;
      if (typeof executionId !== "string" || typeof toolCallId !== "string" || typeof approved !== "boolean")
        return sendJson(res, 400, { error: "expected { executionId, toolCallId, approved, reason? }" });
      const current = await model(executionId);
      if (!current.pending.some((p) => p.toolCallId === toolCallId))
        return sendJson(res, 404, { error: `no tool call "${toolCallId}" waits for approval in "${executionId}"` });
      const event = {
        type: TOOL_APPROVAL_EVENT,
        toolCallId,
        approved,
        ...(typeof reason === "string" && reason ? { reason } : {}),
      };
      // The way `loomwork approve` goes: the owning app's control socket, else journaled with --logic.
      const fresh = await openJournal(ctx.dir, { readOnly: true });
      try {
        const outcome = await operate({ ...ctx, journal: () => Promise.resolve(fresh) }, executionId, {
          op: "send",
          event,
        });
        return sendJson(res, 200, outcome);
      } finally {
        await fresh.close();
      }
    }
    return sendJson(res, 404, { error: `nothing at ${url.pathname}` });
  };

  return createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status =
        error instanceof UsageError ? 400 : error instanceof CliError && error.exitCode === EXIT.notFound ? 404 : 500;
      if (!res.headersSent) sendJson(res, status, { error: error instanceof Error ? error.message : String(error) });
      else res.end();
    });
  });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new UsageError(`a decision is at most ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new UsageError("a decision must be JSON");
  }
}

/** A page module: the package's compiled .js, or, in a checkout run with tsx, the .ts transpiled by the esbuild tsx brings. */
async function moduleSource(dir: string, name: string): Promise<string> {
  const js = `${dir}${name}.js`;
  if (existsSync(js)) return readFile(js, "utf8");
  const ts = `${dir}${name}.ts`;
  const { transform } = await import("esbuild");
  return (await transform(await readFile(ts, "utf8"), { loader: "ts", format: "esm", target: "es2022" })).code;
}
