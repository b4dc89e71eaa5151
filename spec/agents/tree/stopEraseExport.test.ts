// Issue 34, "the tree behaves as one run": app.stop of a lead stops every sub-agent, and erasure and export of a
// subject reach every agent's journal and blobs.
import { describe, expect, it } from "vitest";
import { createApp, defineConfig, EncryptingContentStore, memoryStores } from "../../../index.js";
import { eraseSubject, exportSubject } from "../../../lifecycle.js";
import { STEP_COMPLETED } from "../../../stores/schema.js";
import { lead, researcher, treeEffects, until } from "./support.js";

const canary = (q: string) => `CANARY-${q}-0b7e`;
const rows = (q: string) => Array.from({ length: 60 }, (_, i) => ({ i, text: `${canary(q)} row ${i}` }));

describe("a tree of agents as one run: stop, erase, export", () => {
  it("app.stop(leadId) stops every sub-agent, two of them mid-model-call", async () => {
    let waiting = 0;
    const { effects } = treeEffects({ beforeAnswer: () => (waiting++, new Promise<void>(() => undefined)) });
    const app = createApp(defineConfig({ stores: memoryStores(), effects }));
    await app.start(lead, { executionId: "s1", input: { prompt: "owls and bats?" } });
    const ended = app.result("s1").then(
      () => "done",
      () => "stopped",
    );
    await until(() => waiting === 2, "both sub-agents mid-call");
    await app.stop("s1");
    expect(await ended).toBe("stopped");
    const tree = await app.executions({ root: "s1" });
    expect(tree.map((info) => [info.executionId, info.status])).toEqual([
      ["s1", "stopped"],
      ["s1/tool:0:0", "stopped"],
      ["s1/tool:0:1", "stopped"],
    ]);
    await app.close();
  });

  it("erasure and export of the subject reach every agent's journal and blobs", async () => {
    const stores = memoryStores();
    const content = new EncryptingContentStore(stores.content, stores.keys);
    const { effects } = treeEffects({ search: (q) => ({ rows: rows(q) }) });
    const app = createApp(
      defineConfig({
        stores,
        effects,
        logics: [lead, researcher],
        execution: { claimCheck: { store: content, toolIds: ["search"] } },
        security: { crypto: { keys: stores.keys } },
        compliance: { erase: true },
      }),
    );
    await app.start(lead, { executionId: "e1", subject: "A", input: { prompt: "owls and bats?" } });
    await app.result("e1");
    const exported = await exportSubject(app, "A");
    expect(exported.executions.map((e) => e.executionId)).toEqual(["e1", "e1/tool:0:0", "e1/tool:0:1"]);
    // Each sub-agent's offloaded search is resolved, with its citer.
    expect(exported.claimChecked.map((blob) => blob.citedBy).sort()).toEqual([["e1/tool:0:0"], ["e1/tool:0:1"]]);
    expect(JSON.stringify(exported.claimChecked)).toContain(canary("owls"));
    const child = (await app.log("e1/tool:0:0")).find((r) => r.type === STEP_COMPLETED && r.effectId === "search");
    expect(child).toBeDefined();

    const erased = await eraseSubject(app, "A");
    expect(erased.executions.sort()).toEqual(["e1", "e1/tool:0:0", "e1/tool:0:1"]);
    expect(erased.shredded).toBe(true);
    const blobs = exported.claimChecked.map((blob) => blob.address);
    for (const address of blobs) expect(await content.has(address)).toBe(false);
    // Nothing readable of any agent of the tree is left in the stores.
    for (const id of ["e1", "e1/tool:0:0", "e1/tool:0:1"]) {
      const raw = JSON.stringify(await stores.events.read(id));
      expect(raw).not.toContain(canary("owls"));
      expect(raw).not.toContain(canary("bats"));
    }
    await expect(exportSubject(app, "A")).rejects.toThrow(/erased/);
    await app.close();
  });
});
