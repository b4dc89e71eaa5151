// The runtime state's per-child-id occurrence counters (actors/journal/counters.ts): persistent versions
// that agree with the plain object they replaced, entry for entry, and persist as that object.
import { describe, expect, it } from "vitest";
import { Counters } from "../actors/journal/counters.js";

describe("Counters", () => {
  it("agrees with a plain object at every version, however many child ids, and leaves earlier versions as they were", () => {
    const model: Record<string, number> = {};
    const versions: { counters: Counters; plain: Record<string, number> }[] = [];
    let counters = Counters.empty;
    for (let i = 0; i < 1500; i++) {
      // One child id spawned again and again (the model), and one new id per spawn (the tool calls).
      const childId = i % 3 === 0 ? "model" : `tool:${i}:0`;
      const occurrence = counters.get(childId) + 1;
      expect(occurrence).toBe((model[childId] ?? 0) + 1);
      model[childId] = occurrence;
      counters = counters.with(childId, occurrence);
      if (i % 97 === 0) versions.push({ counters, plain: { ...model } });
    }
    expect(counters.toJSON()).toEqual(model);
    for (const v of versions) expect(v.counters.toJSON()).toEqual(v.plain);
    expect(Counters.empty.toJSON()).toEqual({});
  });

  it("persists as the plain object and restores from it (the snapshot format is unchanged)", () => {
    let counters = Counters.empty;
    for (const id of ["a", "b", "a", "__proto__", "c", "a"]) counters = counters.with(id, counters.get(id) + 1);
    const text = JSON.stringify(counters.toJSON());
    const parsed: unknown = JSON.parse(text);
    expect(parsed).toEqual(JSON.parse('{"a":3,"b":1,"__proto__":1,"c":1}'));
    const restored = Counters.from(parsed);
    expect(restored.get("a")).toBe(3);
    expect(restored.get("__proto__")).toBe(1);
    expect(restored.get("never")).toBe(0);
    expect(JSON.stringify(restored.toJSON())).toBe(text);
    // An older snapshot without counters, or a damaged entry, restores as no count.
    expect(Counters.from(undefined).toJSON()).toEqual({});
    expect(Counters.from({ a: "x", b: 2 }).toJSON()).toEqual({ b: 2 });
  });

  it("a restored version reads its persisted object in place, agrees with the plain model through later spawns, and never changes that object", () => {
    const persisted: Record<string, unknown> = { model: 400, damaged: "x" };
    for (let i = 0; i < 1000; i++) persisted[`tool:${i}:0`] = 1;
    const text = JSON.stringify(persisted);
    const parsed: unknown = JSON.parse(text);
    const model: Record<string, number> = Object.fromEntries(
      Object.entries(persisted).filter((e): e is [string, number] => typeof e[1] === "number"),
    );
    let counters = Counters.from(parsed);
    const restored = counters;
    expect(restored.get("damaged")).toBe(0);
    expect(restored.get("toString")).toBe(0);
    for (let i = 0; i < 300; i++) {
      // Spawns past the first rebuild of the base (the persisted object folded in) and past later ones.
      const childId = i % 2 === 0 ? "model" : i % 5 === 0 ? `tool:${i}:0` : `tool:${1000 + i}:0`;
      const occurrence = counters.get(childId) + 1;
      expect(occurrence).toBe((model[childId] ?? 0) + 1);
      model[childId] = occurrence;
      counters = counters.with(childId, occurrence);
    }
    expect(counters.toJSON()).toEqual(model);
    expect(JSON.stringify(parsed)).toBe(text);
    expect(restored.get("model")).toBe(400);
    expect(JSON.stringify(restored.toJSON())).toBe(
      JSON.stringify(Object.fromEntries(Object.entries(persisted).filter(([, v]) => typeof v === "number"))),
    );
  });
});
