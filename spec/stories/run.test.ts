// npm run story <name>: every story README.md lists is offered, and browser-offline (a folder story)
// builds and serves its page through the same command, until it is stopped.
import { execFile, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("npm run story", () => {
  it("offers every story of the README's table, browser-offline included", async () => {
    const { stderr } = await run(process.execPath, ["--import", "tsx", "stories/run.ts"], { encoding: "utf8" });
    const offered = /stories: (.*)/.exec(stderr)![1]!.split(", ");
    const readme = await readFile("README.md", "utf8");
    const table = readme.slice(readme.indexOf("## Stories"), readme.indexOf("## The CLI"));
    const listed = [...table.matchAll(/^\| `([\w-]+)`/gm)].map((m) => m[1]!);
    expect(listed.sort()).toEqual(offered.sort());
    expect(offered).toContain("browser-offline");
  });

  it("refuses an unknown story with exit 2 and the list", async () => {
    const failed = await run(process.execPath, ["--import", "tsx", "stories/run.ts", "browser-ofline"], {
      encoding: "utf8",
    }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toMatch(/stories: .*browser-offline/);
  });

  it("browser-offline builds the page, serves it on the port given, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "stories/run.ts", "browser-offline", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    let out = "";
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const found = /Open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (found) done(found[1]!);
      });
      child.on("exit", () => fail(new Error(`the story ended before serving:\n${out}`)));
    });
    try {
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<script type="module"[^>]*src="\/assets\/[^"]+\.js"/);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).not.toBeNull();
    await expect(fetch(url)).rejects.toThrow();
  }, 120_000);
});
