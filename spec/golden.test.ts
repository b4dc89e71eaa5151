// Golden journals written by earlier releases replay unchanged on every run: a change that breaks
// resuming an old execution cannot land. Regenerate only with a schema version bump.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createApp } from "../actors/app.js";
import { defineConfig } from "../actors/config.js";
import { memoryStores } from "../stores/memory.js";
import { EVENT_SCHEMA } from "../stores/schema.js";
import type { StoredRecord } from "../stores/types.js";
import { demoMachine } from "./support/demoMachine.js";
import { countedDemoEffects } from "./support/harness.js";

const golden = JSON.parse(readFileSync(new URL("./fixtures/demo-v1.journal.json", import.meta.url), "utf8")) as {
  schema: number;
  executionId: string;
  records: StoredRecord[];
};

describe("golden journals", () => {
  it("demo-v1 replays to its recorded output with no effect run", async () => {
    expect(golden.schema).toBeLessThanOrEqual(EVENT_SCHEMA.version);
    const stores = memoryStores();
    await stores.events.append(golden.executionId, 0, golden.records);
    const { effects, runs } = countedDemoEffects();
    const app = createApp(defineConfig({ stores, effects, logics: [demoMachine] }));
    const actor = await app.resume(golden.executionId);
    expect(runs.size).toBe(0);
    expect(actor.getSnapshot().status).toBe("done");
    expect(await app.result(golden.executionId)).toEqual(golden.records.at(-1)!.output);
    expect(actor.replay.recordsReplayed).toBe(golden.records.length);
  });
});
