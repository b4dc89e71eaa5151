// Where serveControl listens and who can reach it: a socket inside a directory only its user can enter
// (the journal directory, or a private per-user directory for a long path), never exposed while it is
// being set up, and never taken from a live app by a second serveControl.
import { execFile, spawn } from "node:child_process";
import { chmod, chown, lstat, mkdir, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  controlSocketPath,
  fsStores,
  serveControl,
  type ControlServer,
  type FsStores,
} from "../../adapters/fs/index.js";
import { connectControl } from "../../cli/control.js";
import { createApp, defineConfig, type App } from "../../index.js";
import { LoomworkError } from "../../stores/errors.js";
import { kill, removeTempDirs, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

const asRoot = process.platform !== "win32" && process.getuid?.() === 0;

interface Served {
  stores: FsStores;
  app: App;
}
const opened: (Served | ControlServer)[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) {
    if ("path" in item) await item.close();
    else {
      await item.app.close();
      await item.stores.close();
    }
  }
});

async function journal(dir: string): Promise<Served> {
  const stores = await fsStores({ dir });
  const served = { stores, app: createApp(defineConfig({ stores, effects: {} })) };
  opened.push(served);
  return served;
}

async function serve(served: Served, dir = served.stores.dir): Promise<ControlServer> {
  const control = await serveControl(served.app, { dir });
  opened.push(control);
  return control;
}

/** The app behind the socket answers: an unknown execution is refused by the app itself, by name. */
async function answers(dir: string): Promise<boolean> {
  const client = await connectControl(dir);
  if (!client) return false;
  try {
    await client.request({ op: "resume", executionId: "nobody-runs-this" });
    return true;
  } catch (error) {
    return error instanceof LoomworkError && error.message.includes("nobody-runs-this");
  } finally {
    client.close();
  }
}

/** Tries to connect to `path` as uid 65534 (nobody), in a process of its own: "connected" or the errno. */
function connectAsNobody(path: string): Promise<string> {
  const script = `const s = require("node:net").connect(${JSON.stringify(path)}); s.on("connect", () => { console.log("connected"); s.destroy(); }); s.on("error", (e) => console.log(e.code));`;
  return new Promise((resolve, reject) =>
    execFile(
      "setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
      { cwd: "/" },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message} ${stderr}`)) : resolve(stdout.trim())),
    ),
  );
}

describe("the control socket's place", () => {
  it("for a journal path over 100 bytes: a 0700 directory of this user's, not a name anyone can compute in the shared temp dir", async () => {
    const dir = join(await tempDir("long"), "a-journal-directory-whose-path-is-long".repeat(3));
    const control = await serve(await journal(dir));
    expect(control.path).toBe(controlSocketPath(dir));
    expect(dirname(control.path)).not.toBe(tmpdir());
    const holder = await lstat(dirname(control.path));
    expect(holder.isDirectory() && !holder.isSymbolicLink()).toBe(true);
    expect(holder.mode & 0o777).toBe(0o700);
    expect(holder.uid).toBe(process.getuid!());
    expect(await answers(dir)).toBe(true);
  });

  it("refuses to listen in a journal directory other users can enter, creating no socket there", async () => {
    const served = await journal(await tempDir("open-dir"));
    await chmod(served.stores.dir, 0o755);
    const error = await serveControl(served.app, { dir: served.stores.dir }).then(
      (control) => (opened.push(control), undefined),
      (error: unknown) => error,
    );
    expect(error).toMatchObject({
      name: "ControlSocketError",
      code: "LOOM_CONTROL_SOCKET",
      message: expect.stringContaining(`${served.stores.dir} is mode 755`),
    });
    expect((await readdir(served.stores.dir)).filter((name) => name.endsWith(".sock"))).toEqual([]);
  });

  it("refuses a per-user socket directory that is open to others or another user's", async () => {
    // The per-user directory ($XDG_RUNTIME_DIR/loomwork here, so the test touches no directory but its own).
    const runtime = await tempDir("runtime");
    const before = process.env.XDG_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = runtime;
    try {
      const dir = join(await tempDir("squatted"), "a-journal-directory-whose-path-is-long".repeat(3));
      const served = await journal(dir);
      const socketDir = dirname(controlSocketPath(dir));
      expect(socketDir).toBe(join(runtime, "loomwork"));
      await mkdir(socketDir, { mode: 0o700 });
      await chmod(socketDir, 0o777);
      await expect(serveControl(served.app, { dir })).rejects.toMatchObject({
        code: "LOOM_CONTROL_SOCKET",
        message: expect.stringContaining(`${socketDir} is mode 777`),
      });
      if (asRoot) {
        await chmod(socketDir, 0o700);
        await chown(socketDir, 65534, 65534);
        await expect(serveControl(served.app, { dir })).rejects.toMatchObject({
          code: "LOOM_CONTROL_SOCKET",
          message: expect.stringContaining(`${socketDir} is owned by uid 65534`),
        });
      }
      expect(await readdir(socketDir)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = before;
    }
  });

  it.runIf(asRoot)("is out of another user's reach from the moment it exists, with any umask", async () => {
    const umask = process.umask(0);
    try {
      const served = await journal(join(await tempDir("nobody"), "journal"));
      const control = await serve(served);
      expect(await connectAsNobody(control.path)).toBe("EACCES");
      const long = await journal(
        join(await tempDir("nobody-long"), "a-journal-directory-whose-path-is-long".repeat(3)),
      );
      const longControl = await serve(long);
      expect(await connectAsNobody(longControl.path)).toBe("EACCES");
    } finally {
      process.umask(umask);
    }
  });
});

describe("one control server per journal directory", () => {
  it("a second serveControl while a live app answers is refused, and the first keeps the socket", async () => {
    const served = await journal(await tempDir("second"));
    await serve(served);
    const reader = await fsStores({ dir: served.stores.dir, readOnly: true });
    const readOnlyApp = createApp(defineConfig({ stores: reader, effects: {} }));
    opened.push({ stores: reader, app: readOnlyApp });
    const second = await serveControl(readOnlyApp, { dir: served.stores.dir }).then(
      (control) => (opened.push(control), undefined),
      (error: unknown) => error,
    );
    expect(second).toMatchObject({
      name: "ControlInUseError",
      code: "LOOM_CONTROL_IN_USE",
      message: expect.stringContaining(served.stores.dir),
    });
    expect(await answers(served.stores.dir)).toBe(true);
  });

  it("a socket file a killed app left is replaced", async () => {
    const served = await journal(await tempDir("stale"));
    const path = controlSocketPath(served.stores.dir);
    const child = spawn(
      process.execPath,
      ["-e", `require("node:net").createServer().listen(${JSON.stringify(path)}, () => console.log("up"))`],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve) => child.stdout!.on("data", () => resolve()));
    await kill(child);
    expect((await lstat(path)).isSocket()).toBe(true);
    await serve(served);
    expect(await answers(served.stores.dir)).toBe(true);
  });
});
