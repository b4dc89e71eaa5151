// The bridge's snapshot patches: applying the diff of a value to the UI's copy gives the value's JSON form,
// without mutating the copy, sharing what did not change, and appending to a growing array.
import { describe, expect, it } from "vitest";
import { applyPatch, diffJson, type PatchOp } from "../../adapters/bridge/patch.js";

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("loomwork/bridge patches", () => {
  it("turns a copy into the next value's JSON form, as JSON.stringify reads it", () => {
    const when = new Date(0);
    const steps: unknown[] = [
      { status: "active", context: { messages: [{ role: "user", text: "hi" }], turn: 0, when, gone: 1 } },
      { status: "active", context: { messages: [{ role: "user", text: "hi" }, { role: "ai" }], turn: 1, when } },
      { status: "active", context: { messages: [{ role: "user", text: "hi!" }], turn: undefined, f: () => 1, n: NaN } },
      { status: "done", context: [1, undefined, { toJSON: () => "x" }], output: { ok: true } },
      { status: "done", context: { list: [] }, output: null },
    ];
    let copy = plain(steps[0]);
    for (const next of steps.slice(1)) {
      const frozen = JSON.stringify(copy);
      const ops: PatchOp[] = [];
      const owner = diffJson(copy, next, ops);
      const ui = applyPatch(copy, ops);
      expect(JSON.stringify(copy)).toBe(frozen);
      expect(ui).toEqual(plain(next));
      expect(owner).toEqual(plain(next));
      copy = ui;
    }
  });

  it("sends an appended message alone, shares unchanged subtrees, and sends nothing when nothing changed", () => {
    const big = { role: "tool", text: "x".repeat(10_000) };
    const before = plain({ context: { messages: [big], turn: 1 } }) as { context: { messages: unknown[] } };
    const ops: PatchOp[] = [];
    diffJson(before, { context: { messages: [big, { role: "ai", text: "ok" }], turn: 2 } }, ops);
    expect(ops).toEqual([
      { p: ["context", "messages"], push: [{ role: "ai", text: "ok" }] },
      { p: ["context", "turn"], set: 2 },
    ]);
    const after = applyPatch(before, ops);
    expect(after.context.messages[0]).toBe(before.context.messages[0]);
    const none: PatchOp[] = [];
    expect(diffJson(after, plain(after), none)).toBe(after);
    expect(none).toEqual([]);
  });
});
