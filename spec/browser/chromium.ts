// Launches the system's headless Chromium (Debian's /usr/bin/chromium, or LOOMWORK_CHROMIUM) through
// playwright-core, with the flags CI uses: on a persistent profile (a user data directory on disk,
// where IndexedDB outlives the browser process) for the browser harness, or plain for the story specs
// that serve their own page. Never downloads a browser; a missing binary fails with how to install it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chromium, type Browser, type BrowserContext } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
];

export const CHROMIUM_PATH = process.env.LOOMWORK_CHROMIUM ?? "/usr/bin/chromium";

/** Fails, saying how to install it, when the system Chromium is missing. */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser specs need Chromium at ${CHROMIUM_PATH} and found none. Install it with ` +
        "`apt-get update && apt-get install -y chromium` (Debian), or set LOOMWORK_CHROMIUM to its path. " +
        "These specs never download a browser.",
    );
  }
}

/**
 * A browser whose contexts are incognito (IndexedDB in memory): for specs that need no persistence.
 * `extraArgs` are added to CHROMIUM_ARGS (e.g. `--host-resolver-rules=MAP lan.test 127.0.0.1`).
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  assertChromium();
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/**
 * Chromium on the persistent profile `userDataDir`: IndexedDB, localStorage and the rest live on disk
 * there, so a later launch on the same directory (after a close or a SIGKILL) finds them.
 */
export async function launchProfile(userDataDir: string): Promise<BrowserContext> {
  assertChromium();
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/** One process of a Chromium instance: `type` is its `--type=` switch, "browser" for the main process. */
export interface ChromiumProcess {
  pid: number;
  type: string;
}

/**
 * The live processes of the Chromium running on `userDataDir`, main process first. Every one of them
 * carries `--user-data-dir=<dir>` on its command line (the main process, the zygotes, the GPU, network
 * and storage services, the renderers), which is how they are told apart from any other Chromium.
 */
export function chromiumProcesses(userDataDir: string): ChromiumProcess[] {
  const flag = `--user-data-dir=${userDataDir}`;
  const found: ChromiumProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      // Chromium's child processes rewrite their title: one space-joined string instead of NUL-separated args.
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split(/[\0 ]/);
    } catch {
      continue; // exited while we looked
    }
    if (!argv.includes(flag) || isZombie(Number(entry))) continue;
    const type = argv.find((arg) => arg.startsWith("--type="))?.slice("--type=".length) ?? "browser";
    found.push({ pid: Number(entry), type });
  }
  return found.sort((a, b) => Number(b.type === "browser") - Number(a.type === "browser") || a.pid - b.pid);
}

function isZombie(pid: number): boolean {
  try {
    // /proc/<pid>/stat: "pid (comm) state ..."; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return true;
  }
}

/**
 * How much of a Chromium to SIGKILL: `"browser"` only its main process, as a browser crash does (the
 * children, the storage service that runs IndexedDB among them, notice and exit on their own); `"all"`
 * the main process and, in the same instant, every child, so none gets to finish a write.
 */
export type ChromiumKill = "browser" | "all";

/**
 * SIGKILLs the Chromium on `userDataDir` (see ChromiumKill). Synchronous, so a test can call it from
 * inside a binding the page is calling. Returns the processes it killed.
 */
export function killChromium(userDataDir: string, what: ChromiumKill = "all"): ChromiumProcess[] {
  const processes = chromiumProcesses(userDataDir);
  if (!processes.some((p) => p.type === "browser")) throw new Error(`no Chromium main process runs on ${userDataDir}`);
  const doomed = what === "all" ? processes : processes.filter((p) => p.type === "browser");
  for (const { pid } of doomed) {
    try {
      process.kill(pid, "SIGKILL");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }
  return doomed;
}

/** Resolves once no process of the Chromium on `userDataDir` is left (reaped or a zombie); returns how long that took. */
export async function chromiumGone(userDataDir: string, timeoutMs = 15_000): Promise<number> {
  const t0 = Date.now();
  const deadline = t0 + timeoutMs;
  for (;;) {
    const left = chromiumProcesses(userDataDir);
    if (left.length === 0) return Date.now() - t0;
    if (Date.now() > deadline)
      throw new Error(
        `Chromium on ${userDataDir} still runs ${timeoutMs} ms after its SIGKILL: ${JSON.stringify(left)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
