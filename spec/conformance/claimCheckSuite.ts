// The claim-check on every adapter (ADR 0140): an over-cap tool result goes to the adapter's content
// store and the journal holds the envelope; a fresh app over the reopened stores resolves it from there.
import { describe, expect, it } from "vitest";
import { STEP_COMPLETED } from "../../stores/schema.js";
import { canaryOf, offloaded, runAgent, world } from "../lifecycle/support.js";
import { withStores, type AdapterHarness } from "../support/adapterHarness.js";

export function describeClaimCheckSuite(name: string, harness: AdapterHarness): void {
  describe(`the claim-check on ${name}`, () => {
    it(
      "offloads an over-cap tool result to the content store; the journal holds the envelope, not the bytes",
      withStores(harness, async ({ stores }) => {
        const w = world({ stores });
        const app = w.app();
        await runAgent(app, "a1", "A", ["fetch", "shared"]);
        const refs = await offloaded(app, "a1");
        expect(Object.keys(refs).sort()).toEqual(["fetch", "shared"]);
        for (const address of Object.values(refs)) expect(await w.content.has(address)).toBe(true);
        const record = (await app.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!;
        expect(record.output).toMatchObject({ __loomClaimCheck: 1, retain: true });
        expect(JSON.stringify(record.output)).not.toContain("fetch A row 39");
        expect(await app.resolveClaimCheck(record.output, { subject: "A" })).toMatchObject({
          owner: "A",
          canary: canaryOf("A"),
        });
        await app.close();
      }),
    );

    it(
      "a fresh app over the reopened stores reads the same envelope and resolves it from the reopened content store",
      withStores(harness, async (opened) => {
        const first = world({ stores: opened.stores }).app();
        await runAgent(first, "a1", "A", ["fetch"]);
        const output = await first.result("a1");
        const envelope = (await first.log("a1")).find(
          (r) => r.type === STEP_COMPLETED && r.effectId === "fetch",
        )!.output;
        await first.close();
        const w = world({ stores: await opened.reopen() });
        const second = w.app();
        expect(await second.result("a1")).toEqual(output);
        expect(
          (await second.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!.output,
        ).toEqual(envelope);
        expect(await second.resolveClaimCheck(envelope, { subject: "A" })).toMatchObject({
          owner: "A",
          rows: expect.any(Array),
        });
        await second.close();
      }),
    );

    it(
      "with security.crypto the blob is sealed per subject: its stored bytes hold no plaintext",
      withStores(harness, async ({ stores }) => {
        const w = world({ stores, crypto: true });
        const app = w.app();
        await runAgent(app, "a1", "A", ["fetch"]);
        const { fetch } = await offloaded(app, "a1");
        const raw = await stores.content.get(fetch!);
        expect(raw).toBeDefined();
        expect(Buffer.from(raw!).toString("latin1")).not.toContain(canaryOf("A"));
        const record = (await app.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!;
        expect(await app.resolveClaimCheck(record.output, { subject: "A" })).toMatchObject({ canary: canaryOf("A") });
        await app.close();
      }),
    );
  });
}
