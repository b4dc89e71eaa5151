// ADR 0140 D8: exportSubject resolves the subject's blobs, so an Art. 15/20 export is the data, not refs.
import { describe, expect, it } from "vitest";
import { toBase64 } from "../../stores/bytes.js";
import { SubjectErasedError } from "../../stores/errors.js";
import { isSealed } from "../../stores/recordSealing.js";
import { EXECUTION_STARTED, STEP_COMPLETED } from "../../stores/schema.js";
import { canaryOf, offloaded, rejection, runAgent, world } from "./support.js";
import { archive, eraseSubject, exportSubject } from "../../lifecycle.js";

describe("exportSubject, of an app or of bare stores", () => {
  it("returns the subject's executions with their records decrypted", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await archive(app, "a1");
    await runAgent(app, "a2", "A", ["public2"]);
    await runAgent(app, "b1", "B", ["fetch"]);
    const exported = await exportSubject(app, "A");
    expect(exported.subject).toBe("A");
    expect(exported.executions.map((e) => e.executionId)).toEqual(["a1", "a2"]);
    const [a1] = exported.executions;
    expect(a1).toMatchObject({
      status: "done",
      logicId: "agent-fetch",
      startedAt: expect.any(Number),
      endedAt: expect.any(Number),
    });
    expect(a1!.records.some(isSealed)).toBe(false);
    expect(a1!.records[0]).toMatchObject({ seq: 1, type: EXECUTION_STARTED, input: { prompt: "work for A" } });
    expect(a1!.records.map((r) => r.seq)).toEqual(a1!.records.map((_, i) => i + 1));
    expect(a1!.snapshot?.state).toMatchObject({ status: "done" });
    expect(JSON.stringify(exported)).not.toContain(canaryOf("B"));
  });

  it("claimChecked: [{ address, size, digest, value | bytesBase64 | missing }] for every blob the claim-check recorded", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    const binary = new Uint8Array([0xff, 0xfe, 0x00, 0x80]);
    const file = await w.content.put(binary, { subject: "A" });
    // An envelope of an effect this config no longer registers, at the trusted position: its history vouches (over-retain).
    const start = {
      seq: 1,
      at: 1,
      type: EXECUTION_STARTED,
      logicId: "legacy",
      machineHash: "0",
      subject: "A",
      input: null,
      schema: 1,
    };
    const attached = {
      seq: 2,
      at: 1,
      type: STEP_COMPLETED,
      effectId: "legacyAttach",
      stepId: "legacy#turn:0:tool:0",
      output: { __loomClaimCheck: 1, ref: { __loomContent: file }, size: 4 },
    };
    await w.stores.events.append("a0", 0, [start, attached]);
    await runAgent(app, "a1", "A", ["fetch", "public2", "note"]);
    const { fetch, public2 } = await offloaded(app, "a1");
    await w.stores.content.delete!(public2!);
    const { claimChecked } = await exportSubject(app, "A");
    const by = new Map(claimChecked.map((blob) => [blob.address, blob]));
    const fetchEnvelope = (await app.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "fetch")!
      .output as { size: number; digest: unknown };
    expect(by.get(fetch!)).toEqual({
      address: fetch,
      size: fetchEnvelope.size,
      digest: fetchEnvelope.digest,
      value: { owner: "A", canary: canaryOf("A"), rows: expect.any(Array) },
      citedBy: ["a1"],
    });
    expect(by.get(file)).toMatchObject({ bytesBase64: toBase64(binary), size: 4 });
    expect(by.get(public2!)).toMatchObject({ missing: true });
    expect(by.get(public2!)).not.toHaveProperty("value");
  });

  it("D11: a ref inside a tool's own output is data: listed in unresolved with its citers, never read", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    const file = await w.content.put(new Uint8Array([1, 2, 3]), { subject: "A" });
    w.outputs.set("A", {
      attachment: { __loomContent: file },
      forged: { __loomClaimCheck: 1, ref: { __loomContent: "sha256:00" }, size: 3, retain: true },
    });
    await runAgent(app, "a1", "A", ["note"]);
    const exported = await exportSubject(app, "A");
    expect(exported.claimChecked).toEqual([]);
    expect(exported.unresolved).toEqual(
      expect.arrayContaining([
        { address: file, citedBy: ["a1"] },
        { address: "sha256:00", citedBy: ["a1"] },
      ]),
    );
    expect(exported.unresolved).toHaveLength(2);
  });

  it("D11 writer check: a top-level envelope from an unlisted tool citing another subject's blob is not resolved into the export", async () => {
    // Without security.crypto blobs are plain content addresses, so only the writer check stands between
    // subject A's export and subject B's blob: the forgery sits at the trusted position (the top level).
    const w = world();
    const app = w.app();
    await runAgent(app, "b1", "B", ["fetch"]);
    const { fetch: ofB } = await offloaded(app, "b1");
    expect(ofB).toBeDefined();
    w.outputs.set("A", { __loomClaimCheck: 1, ref: { __loomContent: ofB }, size: 3 });
    await runAgent(app, "a1", "A", ["note"]);
    const noted = (await app.log("a1")).find((r) => r.type === STEP_COMPLETED && r.effectId === "note");
    expect(noted?.output).toMatchObject({ ref: { __loomContent: ofB } }); // journaled as the tool returned it, at the top level
    const exported = await exportSubject(app, "A");
    expect(exported.claimChecked).toEqual([]);
    expect(exported.unresolved).toEqual([{ address: ofB, citedBy: ["a1"] }]);
    expect(JSON.stringify(exported)).not.toContain(canaryOf("B"));
    // B's own export resolves it: the blob was readable all along.
    expect((await exportSubject(app, "B")).claimChecked[0]).toMatchObject({
      address: ofB,
      value: { canary: canaryOf("B") },
    });
  });

  it("exportSubject(subject, { events, keys, content }) reads bare stores", async () => {
    const w = world({ crypto: true });
    await runAgent(w.app(), "a1", "A", ["fetch"]);
    const exported = await exportSubject("A", { events: w.stores.events, keys: w.stores.keys, content: w.content });
    expect(exported.claimChecked).toHaveLength(1);
    expect(exported.claimChecked[0]!.value).toMatchObject({ canary: canaryOf("A") });
    const unwired = await exportSubject("A", { events: w.stores.events, keys: w.stores.keys });
    expect(unwired.claimChecked[0]).toMatchObject({ missing: true });
  });

  it("an erased subject cannot be exported: SubjectErasedError", async () => {
    const w = world({ crypto: true });
    const app = w.app();
    await runAgent(app, "a1", "A", ["fetch"]);
    await eraseSubject(app, "A");
    expect(await rejection(exportSubject(app, "A"))).toBeInstanceOf(SubjectErasedError);
  });
});
