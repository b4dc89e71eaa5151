// An offline page fetches nothing after it loaded (STYLE habit 11, ADR 0010). In real headless Chromium,
// the harness page is loaded, then cut off from the server it came from (every request to its origin
// fails as a lost network does; the loopback model server on another port stays reachable); then a
// retryable 503 on the first model call, a `capabilities.timeoutMs` that fires, and the first
// `app.stream` must journal and deliver exactly what they do in a page that stayed online. A run-time
// `import()` of the runtime's own code would fail here with "Failed to fetch dynamically imported module".
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startOpenAiServer, type OpenAiServer, type ServerTurn } from "../support/openaiServer.js";
import type { OfflineReport, OfflineRun } from "./page/offline.js";
import { openHarnessPage, useBrowserHarness } from "./harness.js";

const harness = useBrowserHarness({ beforeAll, afterAll });
const noise: string[] = [];
let server: OpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ANSWER = "Barn owls hunt by ear.";

/** Every request of `page` to the origin it was loaded from fails from now on; returns what was refused. */
async function cutFromItsServer(page: Page): Promise<string[]> {
  const origin = new URL(harness().url).origin;
  const refused: string[] = [];
  await page.route(
    (url) => url.origin === origin,
    (route) => {
      refused.push(new URL(route.request().url()).pathname);
      return route.abort("internetdisconnected");
    },
  );
  // The cut holds: the page's own document can no longer be fetched.
  expect(
    await page.evaluate(() =>
      fetch(location.href).then(
        () => "reached",
        () => "cut",
      ),
    ),
  ).toBe("cut");
  refused.length = 0;
  return refused;
}

/** The same run in a page that stays online, then in a fresh page cut from its server once loaded. */
async function onlineThenOffline(
  script: (request: { n: number }) => ServerTurn,
  run: Omit<OfflineRun, "db" | "baseURL" | "executionId">,
) {
  const reports: OfflineReport[] = [];
  const requests: number[] = [];
  let refused: string[] = [];
  for (const mode of ["online", "offline"] as const) {
    server = await startOpenAiServer(script);
    const page = await openHarnessPage(harness(), harness().context, noise);
    if (mode === "offline") refused = await cutFromItsServer(page);
    const full: OfflineRun = {
      ...run,
      db: `offline-${mode}-${Date.now()}`,
      baseURL: server.baseURL,
      executionId: "run",
    };
    reports.push(await page.evaluate((r) => window.loom.offline.run(r), full));
    requests.push(server.requests.length);
    await page.close();
    await server.close();
    server = undefined;
  }
  // With what each run journaled, the calls the model server saw: as many from the page cut from its own server.
  return {
    online: { ...reports[0]!, modelCalls: requests[0] },
    offline: { ...reports[1]!, modelCalls: requests[1] },
    refused,
  };
}

describe("a page that lost its server after it loaded", () => {
  it("retries a 503 on the first model call and finishes, as online", async () => {
    const { online, offline, refused } = await onlineThenOffline(
      ({ n }) => (n === 0 ? { status: 503, message: "overloaded" } : { text: ANSWER }),
      {},
    );
    expect(online.outcome).toMatchObject({ ok: true, value: { text: ANSWER } });
    expect(online.failures).toEqual([]);
    expect(online.modelCalls).toBe(2);
    expect(offline).toEqual(online);
    expect(offline.streamed).toContain("text-delta");
    expect(refused).toEqual([]);
  });

  it("journals a configured timeout as a timeout, as online", async () => {
    // The first model call streams two chunks and then holds: `capabilities.timeoutMs` fires.
    const { online, offline, refused } = await onlineThenOffline(
      ({ n }) => (n === 0 ? { text: ANSWER, holdAfterChunks: 2 } : { text: ANSWER }),
      { timeoutMs: 300 },
    );
    expect(online.failures).toEqual([
      expect.objectContaining({ stepId: "offline#turn:0:model", name: "EffectTimeoutError" }),
    ]);
    expect(online.failures[0]!.message).toContain("did not settle within 300 ms");
    expect(online.modelCalls).toBe(1);
    expect(offline).toEqual(online);
    expect(refused).toEqual([]);
  });
});
