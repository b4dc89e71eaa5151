// Everything that crosses into the journal is plain JSON: one check, shared by step outputs, the
// claim-check, start inputs and events, so a live run and its replay see the same values.

/** The JSON text of `value`, or `fail(reason)` thrown for a BigInt, function, symbol, cycle or too-deep value. */
export function jsonText(value: unknown, fail: (reason: string) => Error): string | undefined {
  try {
    return JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === "bigint") throw fail("a BigInt");
      if (typeof v === "function") throw fail("a function");
      if (typeof v === "symbol") throw fail("a symbol");
      return v;
    });
  } catch (error) {
    if (error instanceof RangeError) throw fail("nesting too deep to serialise");
    if (error instanceof TypeError && /circular/i.test(error.message)) throw fail("a cycle");
    throw error;
  }
}

/** `value` as JSON would carry it (a Date becomes its string, a Map `{}`), or `fail(reason)` thrown. */
export function plainJson<T>(value: T, fail: (reason: string) => Error): T {
  const text = jsonText(value, fail);
  return (text === undefined ? undefined : JSON.parse(text)) as T;
}
