// A page served over plain http on a LAN name is not a secure context: the browser leaves WebCrypto's
// crypto.subtle (and crypto.randomUUID) undefined there. loomwork hashes and seals with it, so the stores
// and the app refuse at boot with a typed error that says what to do, instead of the first run dying on
// "Cannot read properties of undefined (reading 'digest')". Here the insecure context is made by hiding
// crypto.subtle; the real one is a Chromium page on http://lan.test (spec/browser/secureContext.browser.test.ts).
import "fake-indexeddb/auto";
import { IDBFactory, IDBKeyRange } from "fake-indexeddb";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  defineConfig,
  ERROR_CODES,
  InsecureContextError,
  LoomworkError,
  memoryStores,
  scriptedModel,
} from "../../index.js";
import { indexedDbStores } from "../../adapters/indexeddb/index.js";

/** What an insecure context leaves of WebCrypto: getRandomValues only. */
function hideSubtleCrypto(): void {
  const real = globalThis.crypto;
  vi.stubGlobal("crypto", { getRandomValues: real.getRandomValues.bind(real) });
  vi.stubGlobal("isSecureContext", false);
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("a context without WebCrypto (not a secure context)", () => {
  it("refuses indexedDbStores at open with InsecureContextError saying to serve over https or localhost", async () => {
    hideSubtleCrypto();
    const error = await indexedDbStores({ name: "insecure", indexedDB: new IDBFactory(), IDBKeyRange }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InsecureContextError);
    expect(error).toBeInstanceOf(LoomworkError);
    expect(error).toMatchObject({
      name: "InsecureContextError",
      code: ERROR_CODES.insecureContext,
      where: "indexedDbStores",
    });
    expect((error as Error).message).toMatch(
      /loomwork needs a secure context \(https or localhost\) for WebCrypto.*serve the page over https/,
    );
  });

  it("refuses createApp at boot, before a run could die on crypto.subtle", () => {
    hideSubtleCrypto();
    const effects = { model: createLlmEffect(scriptedModel([{ text: "Hello." }])) };
    expect(() =>
      createApp(defineConfig({ stores: memoryStores(), effects, logics: [agentLoop$({ id: "a", model: "model" })] })),
    ).toThrow(InsecureContextError);
  });

  it("says WebCrypto is missing, not the context, where the context is secure but has none", async () => {
    hideSubtleCrypto();
    vi.stubGlobal("isSecureContext", undefined);
    const error = await indexedDbStores({ name: "no-webcrypto", indexedDB: new IDBFactory(), IDBKeyRange }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InsecureContextError);
    expect((error as Error).message).toMatch(/WebCrypto \(globalThis\.crypto\.subtle\) is missing/);
  });

  it("opens and runs as before where WebCrypto is there", async () => {
    const stores = await indexedDbStores({ name: "secure", indexedDB: new IDBFactory(), IDBKeyRange });
    const app = createApp(
      defineConfig({ stores, effects: { model: createLlmEffect(scriptedModel([{ text: "Hello." }])) } }),
    );
    await app.start(agentLoop$({ id: "a", model: "model" }), { executionId: "run-1", input: { prompt: "Say hello." } });
    expect(await app.result("run-1")).toMatchObject({ text: "Hello." });
    await app.close();
    await stores.close();
  });
});
