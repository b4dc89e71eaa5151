// The internal effects' ids are listed apart from their code (the app checks ids at start without importing
// the effects): the list and the code must name the same effects.
import { describe, expect, it } from "vitest";
import { INTERNAL_EFFECTS } from "../../actors/lifecycle/internalEffects.js";
import { INTERNAL_EFFECT_IDS, isInternalEffect } from "../../actors/lifecycle/maintenance.js";

describe("the runtime's internal effects", () => {
  it("lists exactly the ids whose code internalEffects.ts holds", () => {
    expect([...INTERNAL_EFFECT_IDS].sort()).toEqual(Object.keys(INTERNAL_EFFECTS).sort());
    expect(INTERNAL_EFFECT_IDS.length).toBeGreaterThan(0);
  });

  it("knows an internal effect by its id only", () => {
    for (const id of INTERNAL_EFFECT_IDS) expect(isInternalEffect(id)).toBe(true);
    expect(isInternalEffect("model")).toBe(false);
    expect(isInternalEffect("loom.sweep")).toBe(false);
    expect(isInternalEffect("toString")).toBe(false);
  });
});
