// Builds the browser-offline story with Vite and serves it on 127.0.0.1 (a secure context, so Web Locks
// and WebCrypto exist). Run it with `npx tsx stories/browser-offline/serve.ts [--port 5178]` and open
// the printed URL; the spec imports buildStory and serveStatic to drive the same page in Chromium.
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "vite";

export const STORY_ROOT = dirname(fileURLToPath(import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".svg": "image/svg+xml",
};

/** Builds the page into `outDir` (default `stories/browser-offline/dist`, git-ignored). */
export async function buildStory(outDir = join(STORY_ROOT, "dist")): Promise<string> {
  await build({
    root: STORY_ROOT,
    configFile: false,
    logLevel: "silent",
    build: { outDir, emptyOutDir: true, target: "es2022", reportCompressedSize: false },
  });
  return outDir;
}

export interface StaticServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves the files under `root` on 127.0.0.1; port 0 picks a free one. */
export function serveStatic(root: string, port = 0): Promise<StaticServer> {
  const base = resolve(root);
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
    const file = normalize(join(base, path === "/" ? "index.html" : path));
    if (!file.startsWith(base + sep)) {
      response.writeHead(403).end();
      return;
    }
    readFile(file).then(
      (body) =>
        response
          .writeHead(200, {
            "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
            "cache-control": "no-store",
          })
          .end(body),
      () => response.writeHead(404, { "content-type": "text/plain" }).end("not found"),
    );
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const { port: bound } = server.address() as AddressInfo;
      resolvePromise({
        url: `http://127.0.0.1:${bound}/`,
        server,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

function portArgument(argv: string[]): number {
  const at = argv.indexOf("--port");
  const raw = at >= 0 ? argv[at + 1] : process.env.PORT;
  const port = Number(raw ?? 5178);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`serve: --port must be an integer from 0 to 65535, got ${JSON.stringify(raw)}.`);
    process.exit(2);
  }
  return port;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const port = portArgument(process.argv.slice(2));
  console.log("loomwork story: browser-offline (building with Vite...)");
  const outDir = await buildStory();
  const { url } = await serveStatic(outDir, port).catch((error: NodeJS.ErrnoException) => {
    console.error(
      error.code === "EADDRINUSE"
        ? `serve: port ${port} is in use; pass --port <n> (0 picks a free one).`
        : String(error),
    );
    process.exit(1);
  });
  console.log(
    `Serving ${outDir}\nOpen ${url} (Ctrl-C to stop). Run the agent, reload mid-run, and watch it resume from IndexedDB.`,
  );
}
