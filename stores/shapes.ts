// The shape checks every layer makes on a value from outside (a journaled record's payload, a tool's schema,
// a model's reply, a control socket's line), and how a refusal shows that value: one definition each, here at
// the bottom so all may import it.

/** True for an object that is neither null nor an array: what has named fields to read. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for any non-null object, arrays included: what a property may be read of, as JSON and `in` read it. */
export function isObjectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** True for an event a machine can take: an object with a string `type` (a hand-edited journal may hold anything). */
export function isEventObject(value: unknown): value is Record<string, unknown> & { type: string } {
  return isObject(value) && typeof value.type === "string";
}

/** A value as a refusal's message shows it: JSON where it has it; NaN, undefined, BigInts, functions and symbols by name. */
export function shown(value: unknown): string {
  if (
    typeof value === "number" ||
    typeof value === "bigint" ||
    value === undefined ||
    typeof value === "function" ||
    typeof value === "symbol"
  )
    return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
