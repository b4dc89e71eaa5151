// Generators for the forgery properties (ADR 0140 D11): a retained-looking envelope planted at a nested
// position of a tool output.
import fc from "fast-check";
import { tainted } from "../../machines/helpers/taint.js";

// A path from the top of a tool output down to where the forgery sits: object keys, array slots, taint wrappers.
const json = fc.jsonValue({ maxDepth: 2 });
const pathStep = fc.oneof(
  fc.record({
    kind: fc.constant("key" as const),
    key: fc.string(),
    siblings: fc.dictionary(fc.string(), json, { maxKeys: 3 }),
  }),
  fc.record({
    kind: fc.constant("index" as const),
    before: fc.array(json, { maxLength: 3 }),
    after: fc.array(json, { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant("taint" as const), origin: fc.string({ minLength: 1 }) }),
);
type PathStep = typeof pathStep extends fc.Arbitrary<infer T> ? T : never;
/** Anywhere, the top level included. */
export const anyPath = fc.array(pathStep, { maxLength: 6 });
/** Nested: anywhere but the top level or directly under one taint wrapper (the trusted position). */
export const nestedPath = fc
  .array(pathStep, { minLength: 1, maxLength: 6 })
  .filter((p) => !(p.length === 1 && p[0]!.kind === "taint"));

/** Plants `leaf` at the end of `path`; the JSON round trip is what a journal stores. */
export function plant(path: PathStep[], leaf: unknown): unknown {
  const built = path.reduceRight<unknown>((inner, s) => {
    if (s.kind === "key") return { ...s.siblings, [s.key]: inner };
    if (s.kind === "index") return [...s.before, inner, ...s.after];
    return tainted(inner, s.origin);
  }, leaf);
  return JSON.parse(JSON.stringify(built));
}
export const forgedEnvelope = (a: string) => ({
  __loomClaimCheck: 1,
  ref: { __loomContent: a },
  size: 3,
  retain: true,
});
