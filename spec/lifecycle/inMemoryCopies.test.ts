// Erasure drops every in-memory copy of the subject's outcomes the erasing app holds, whatever the app has
// touched before: the settled outcomes app.result answers from, the read models (created or not, hydrated
// or not), and the stream buffers app.stream keeps after an execution ended. Memory and fs stores, plain
// and sealed (security.crypto with an EncryptingContentStore).
import { afterEach, describe, expect, it } from "vitest";
import type { App } from "../../actors/app.js";
import { UnknownExecutionError } from "../../actors/errors.js";
import { SubjectErasedError } from "../../stores/errors.js";
import type { Stores } from "../../stores/types.js";
import { fsHarness, memoryHarness, type AdapterHarness } from "../support/adapterHarness.js";
import { canaryOf, rejection, runAgent, world } from "./support.js";
import { eraseSubject } from "../../lifecycle.js";
import { createReadModels } from "../../readModels.js";

const STORES: [string, () => AdapterHarness][] = [
  ["memory", memoryHarness],
  ["fs", fsHarness],
];
const MODES = [
  { mode: "plain", crypto: false },
  { mode: "sealed", crypto: true },
] as const;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(harness: AdapterHarness): Promise<Stores> {
  const stores = await harness.open();
  cleanups.push(async () => harness.cleanup?.(stores));
  return stores;
}

/** Every part app.stream gives of the execution; `now`: only what it holds already (the signal is aborted, so the iteration ends there). */
async function streamParts(app: App, executionId: string, options: { now?: boolean } = {}): Promise<unknown[]> {
  const controller = new AbortController();
  if (options.now) controller.abort();
  const parts: unknown[] = [];
  for await (const part of app.stream(executionId, { signal: controller.signal })) parts.push(part);
  return parts;
}

describe("erasure drops every in-memory copy of the subject's outcomes in the app that erased it", () => {
  for (const [storeName, harness] of STORES) {
    for (const { mode, crypto } of MODES) {
      it(`${storeName}, ${mode}: app.result of an erased execution rejects with SubjectErasedError though the app never touched its read models`, async () => {
        const w = world({ stores: await open(harness()), crypto });
        const app = w.app();
        cleanups.push(() => app.close());
        await runAgent(app, "a1", "A", ["fetch"]);
        await runAgent(app, "b1", "B", ["fetch"]);
        expect(await app.result("a1")).toMatchObject({ text: "done" });
        await eraseSubject(app, "A");
        const error = await rejection(app.result("a1"));
        expect(error, "app.result after the erasure").toBeInstanceOf(SubjectErasedError);
        expect(JSON.stringify(error)).not.toContain("done");
        // Sealed: refused (the key is gone); plain: the history was deleted whole.
        const log = await app.log("a1").catch((refused: unknown) => refused);
        if (crypto) expect(log).toBeInstanceOf(SubjectErasedError);
        else expect(log).toEqual([]);
        // Another subject's outcome stays.
        expect(await app.result("b1")).toMatchObject({ text: "done" });
      });

      it(`${storeName}, ${mode}: read models created but not yet hydrated, and a stream kept after its end, hold nothing of the erased execution`, async () => {
        const w = world({ stores: await open(harness()), crypto });
        const app = w.app();
        cleanups.push(() => app.close());
        await runAgent(app, "a1", "A", ["fetch"]);
        // A stream read to its end: the app keeps its buffer for a late reconnect.
        const streamed = JSON.stringify(await streamParts(app, "a1"));
        expect(streamed).toContain(canaryOf("A"));
        const models = createReadModels(app); // created, its hydration left running
        await eraseSubject(app, "A");
        expect(await rejection(app.result("a1"))).toBeInstanceOf(SubjectErasedError);
        if (mode === "plain") {
          // Plain erasure deletes the history whole: the stream has nothing to rebuild from and says so.
          expect(await rejection(streamParts(app, "a1", { now: true }))).toBeInstanceOf(UnknownExecutionError);
        } else {
          const after = await streamParts(app, "a1", { now: true });
          expect(JSON.stringify(after), "the stream buffer kept after the end").not.toContain(canaryOf("A"));
          expect(after).toEqual([]);
        }
        await models.ready;
        expect(models.execution("a1"), "the read model's view").toBeUndefined();
      });
    }
  }
});
