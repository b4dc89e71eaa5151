// ADR 0140 D6 / D11 (2)(3): the content walker. Trust is by position, never by the retain flag alone.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  claimCheckRefsOf,
  claimCheckTrustOf,
  citesUnknown,
  retainRootsOf,
  trustedClaimCheckRefsOf,
  visitCitedAddresses,
} from "../../actors/lifecycle/citations.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { memoryStores } from "../../stores/memory.js";
import { tainted } from "../../machines/helpers/taint.js";
import { EVENT_RECEIVED, EXECUTION_ENDED, STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { anyPath, forgedEnvelope, nestedPath, plant } from "./forgery.js";

const address = (c: string) => `sha256:${c.repeat(64)}`;
const envelope = (a: string, retain = true) => ({
  __loomClaimCheck: 1,
  ref: { __loomContent: a },
  size: 3,
  ...(retain ? { retain: true } : {}),
});
const step = (output: unknown, seq = 1, effectId = "t", stepId = "l#turn:0:tool:0"): StoredRecord => ({
  seq,
  at: 0,
  type: STEP_COMPLETED,
  stepId,
  effectId,
  output,
});
const tool = createToolEffect(async () => null);
/** The writer check of an app that lists `listed` and also registers `unlisted` and `model`. */
const trust = claimCheckTrustOf({
  effects: { listed: tool, unlisted: tool, model: tool },
  execution: { claimCheck: { store: memoryStores().content, toolIds: ["listed"] } },
})!;

/** Address -> load-bearing?, as the sweep sees a history. */
function citations(records: StoredRecord[], options: { pinAll?: boolean } = {}) {
  const seen = new Map<string, boolean>();
  visitCitedAddresses(records, (a, { loadBearing }) => seen.set(a, (seen.get(a) ?? false) || loadBearing), {
    retainRoots: retainRootsOf(records),
    ...options,
  });
  return seen;
}

describe("visitCitedAddresses / retainRootsOf (ADR 0140 D11 (2))", () => {
  it("visits every cited address: envelope refs and bare refs, at any depth, through taint wrappers", () => {
    const value = {
      a: [envelope(address("a"), false)],
      b: { deep: tainted({ x: envelope(address("b")) }, "web") },
      c: { __loomContent: address("c") },
    };
    expect([...claimCheckRefsOf(value)].sort()).toEqual([address("a"), address("b"), address("c")]);
  });

  it("honours retain as load-bearing only on the envelope at the top level of a recorded STEP_COMPLETED output", () => {
    expect(citations([step(envelope(address("a")))]).get(address("a"))).toBe(true);
    expect(citations([step({ nested: envelope(address("a")) })]).get(address("a"))).toBe(false);
    expect(citations([step([envelope(address("a"))])]).get(address("a"))).toBe(false);
  });

  it("through one taint wrapper, not two", () => {
    expect(citations([step(tainted(envelope(address("a")), "mcp:x"))]).get(address("a"))).toBe(true);
    expect(citations([step(tainted(tainted(envelope(address("a")), "a"), "b"))]).get(address("a"))).toBe(false);
  });

  it("never on another record type, and never without retain: true", () => {
    const event: StoredRecord = { seq: 1, at: 0, type: EVENT_RECEIVED, event: envelope(address("a")) };
    const ended: StoredRecord = {
      seq: 2,
      at: 0,
      type: EXECUTION_ENDED,
      status: "done",
      output: envelope(address("b")),
    };
    const telemetry = step(envelope(address("c"), false), 3);
    const seen = citations([event, ended, telemetry]);
    expect([...seen.values()]).toEqual([false, false, false]);
    expect(retainRootsOf([event, ended, telemetry]).size).toBe(0);
  });

  it("archive segments and snapshots pin everything they cite (pinAll)", () => {
    const seen = citations([step({ nested: envelope(address("a"), false) })], { pinAll: true });
    expect(seen.get(address("a"))).toBe(true);
  });

  it("with the app's writer check: only a listed tool's step in an agent tool frame vouches; an unlisted tool or the model never; an unregistered effect still does", () => {
    const top = envelope(address("a"));
    const roots = (effectId: string, stepId = "l#turn:0:tool:0") =>
      retainRootsOf([step(top, 1, effectId, stepId)], { trust }).size;
    expect(roots("listed")).toBe(1);
    expect(roots("listed", "flow#x:1")).toBe(0);
    expect(roots("unlisted")).toBe(0);
    expect(roots("model", "l#turn:0:model")).toBe(0);
    expect(roots("removed-since")).toBe(1);
    expect(trustedClaimCheckRefsOf([step(top, 1, "unlisted")], { trust }).size).toBe(0);
    expect(trustedClaimCheckRefsOf([step(top, 1, "listed")], { trust }).size).toBe(1);
    // Without claim-check config there is no preset to vouch for: the position alone.
    expect(claimCheckTrustOf({ effects: { t: tool } })).toBeUndefined();
  });

  it("a sealed record's refs: load-bearing for a STEP_COMPLETED whose writer vouches and for a sealed state, ordinary otherwise", () => {
    const sealedStep = (effectId: string): StoredRecord => ({
      seq: 1,
      at: 0,
      type: STEP_COMPLETED,
      stepId: "l#turn:0:tool:0",
      effectId,
      sealed: "AAAA",
      refs: [address("a")],
    });
    const loadBearing = (value: unknown) => {
      let seen = false;
      visitCitedAddresses(value, (_a, c) => (seen ||= c.loadBearing), { trust });
      return seen;
    };
    expect(loadBearing([sealedStep("listed")])).toBe(true);
    expect(loadBearing([sealedStep("unlisted")])).toBe(false);
    expect(loadBearing([{ seq: 2, at: 0, type: EVENT_RECEIVED, sealed: "AAAA", refs: [address("a")] }])).toBe(false);
    expect(
      loadBearing({ __loomSealedState: 1, seq: 3, at: 0, type: "loom.snapshot", sealed: "AAAA", refs: [address("a")] }),
    ).toBe(true);
  });

  it("a sealed record's readable refs are load-bearing (the walker cannot see where they sat); a sealed record without refs cites anything", () => {
    const sealed: StoredRecord = {
      seq: 1,
      at: 0,
      type: STEP_COMPLETED,
      stepId: "s",
      sealed: "AAAA",
      refs: [address("a")],
    };
    expect(citations([sealed]).get(address("a"))).toBe(true);
    expect(trustedClaimCheckRefsOf([sealed])).toEqual(new Set([address("a")]));
    expect(citesUnknown([sealed])).toBe(false);
    expect(citesUnknown([{ ...sealed, refs: undefined }])).toBe(true);
  });

  it("a tool output holding a `sealed` field is data, walked like any JSON", () => {
    const output = { sealed: "not really", refs: [address("z")], inner: envelope(address("a")) };
    expect([...citations([step(output)]).keys()]).toEqual([address("a")]);
    expect(citesUnknown([step({ sealed: "x" })])).toBe(false);
  });

  it("walks deeply nested outputs without overflowing the stack", () => {
    let deep: unknown = envelope(address("d"));
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(claimCheckRefsOf(step(deep))).toEqual(new Set([address("d")]));
  });
});

describe("trustedClaimCheckRefsOf / claimCheckRefsOf (ADR 0140 D11 (3))", () => {
  it("counts another execution's citation only at the trusted top-level position (retain or not)", () => {
    const records = [
      step(envelope(address("a"), false), 1),
      step({ nested: envelope(address("b")) }, 2),
      step(tainted(envelope(address("c")), "web"), 3),
    ];
    expect(trustedClaimCheckRefsOf(records)).toEqual(new Set([address("a"), address("c")]));
  });

  it("the broad collection (an erased subject's own refs) takes every position", () => {
    const records = [step(envelope(address("a")), 1), step({ nested: envelope(address("b")) }, 2)];
    expect(claimCheckRefsOf(records)).toEqual(new Set([address("a"), address("b")]));
  });
});

describe("property: a forged retained envelope nested in a tool output pins nothing and is no trusted citation", () => {
  it("anywhere in an unlisted tool's output, the top level included, with the app's writer check", () => {
    const forged = address("f");
    fc.assert(
      fc.property(anyPath, (path) => {
        const records = [step(plant(path, forgedEnvelope(forged)), 1, "unlisted")];
        expect(retainRootsOf(records, { trust }).size).toBe(0);
        expect(trustedClaimCheckRefsOf(records, { trust }).has(forged)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("for every generated output and nesting path", () => {
    const forged = address("f");
    fc.assert(
      fc.property(nestedPath, (path) => {
        const records = [step(plant(path, forgedEnvelope(forged)))];
        expect([...retainRootsOf(records)].some((e) => e.ref.__loomContent === forged)).toBe(false);
        expect(citations(records).get(forged) ?? false).toBe(false);
        expect(trustedClaimCheckRefsOf(records).has(forged)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("while the same envelope at the top (or under one taint wrapper) is trusted", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.string({ minLength: 1 }), (wrap, origin) => {
        const top = forgedEnvelope(address("f"));
        const records = [step(JSON.parse(JSON.stringify(wrap ? tainted(top, origin) : top)))];
        expect(trustedClaimCheckRefsOf(records).has(address("f"))).toBe(true);
        expect(citations(records).get(address("f"))).toBe(true);
      }),
    );
  });
});
