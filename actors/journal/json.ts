// Everything that crosses into the journal is plain JSON: one check, shared by step outputs, the
// claim-check, start inputs and events, so a live run and its replay see the same values.
//
// The rule (docs/getting-started.md, "What may be journaled"): null, booleans, strings, finite numbers,
// arrays and plain objects are kept as they are; a value with a toJSON() method is journaled as what
// toJSON returns (a Date as its ISO string, a Buffer as { type, data }); a boxed primitive as its
// primitive; an undefined property is left out and an undefined array element becomes null, as JSON
// does; any other class instance as its own enumerable fields, as JSON writes it. Anything JSON would
// drop or turn into something else is refused, naming the path inside the value: a BigInt, function or
// symbol, NaN or ±Infinity, a cycle, an invalid Date, a built-in whose data JSON cannot see (a Map, Set,
// typed array, ArrayBuffer, DataView, RegExp, Error, Promise), and any other non-plain object with no own
// fields (URLSearchParams, Headers, a class keeping its data in private fields), which JSON writes as {}.
import { isObjectLike } from "../../stores/shapes.js";

/**
 * Deepest nesting journaled: deterministic (a stack overflow depends on the caller and the engine) and well
 * under what JSON.stringify, JSON.parse and structuredClone manage in V8 (about 3,500 levels), so a value
 * accepted here is read back by every store, including inside the record and the snapshot that wrap it.
 */
export const MAX_JSON_DEPTH = 1_000;

/** The walk's refusal, unwound frame by frame: each frame adds its key, so the success path pays nothing for paths. */
class Refusal {
  readonly keys: (string | number)[] = [];
  constructor(
    readonly reason: string,
    readonly hint = "",
  ) {}
}

/**
 * `value` as the journal keeps it: a fresh plain-JSON copy (see the rule above), or `fail(reason, path)`
 * thrown, where `reason` names what was refused and where (`a Map at input.items[3].when`) and `path` is
 * that path alone. `root` names the value in paths ("input", "event", "output").
 */
export function plainJson(value: unknown, fail: (reason: string, path: string) => Error, root = "output"): unknown {
  const stack: object[] = [];
  try {
    return copy(value, "", stack);
  } catch (error) {
    if (error instanceof Refusal) {
      const path = root + pathText(error.keys.reverse());
      throw fail(`${error.reason} at ${path}${error.hint && `; ${error.hint}`}`, path);
    }
    // Nesting deeper than the stack: JSON could not journal it either.
    if (error instanceof RangeError) throw fail(`nesting too deep to serialise at ${root}`, root);
    throw error;
  }
}

// One walk: checks and copies at once, in JSON.stringify's order (toJSON with its key, then the value).
function copy(value: unknown, key: string, stack: object[]): unknown {
  // Read as `value.toJSON` reads it: a BigInt's from BigInt.prototype, with the BigInt as the receiver.
  const toJSON: unknown = isObjectLike(value)
    ? value.toJSON
    : typeof value === "bigint"
      ? Reflect.get(BigInt.prototype, "toJSON", value)
      : undefined;
  if (typeof toJSON === "function") {
    if (isDate(value) && Number.isNaN(Date.prototype.getTime.call(value)))
      throw new Refusal("an invalid Date", "journal a valid Date, or null on purpose");
    let converted: unknown;
    try {
      converted = toJSON.call(value, key);
    } catch (error) {
      throw new Refusal(
        `a toJSON() that threw ${JSON.stringify(error instanceof Error ? error.message : String(error))}`,
      );
    }
    return plainValue(converted, stack);
  }
  return plainValue(value, stack);
}

function plainValue(value: unknown, stack: object[]): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return value;
    case "number":
      if (Number.isFinite(value)) return value === 0 ? 0 : value; // -0 is journaled as 0, as JSON writes it
      throw new Refusal(Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity");
    case "bigint":
      throw new Refusal("a BigInt");
    case "function":
      throw new Refusal("a function");
    case "symbol":
      throw new Refusal("a symbol");
  }
  // Only an object or null is left.
  if (!isObjectLike(value)) return null;
  const object = value;
  if (stack.includes(object)) throw new Refusal("a cycle");
  if (stack.length >= MAX_JSON_DEPTH) throw new Refusal(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(object)) {
    stack.push(object);
    const out: unknown[] = new Array(object.length);
    for (let i = 0; i < object.length; i++) {
      try {
        const item = copy(object[i], String(i), stack);
        // JSON writes an undefined, dropped element as null.
        out[i] = item === undefined ? null : item;
      } catch (error) {
        if (error instanceof Refusal) error.keys.push(i);
        throw error;
      }
    }
    stack.pop();
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(object);
  if (proto !== Object.prototype && proto !== null && !isPlainPrototype(proto)) {
    const boxed = unboxed(object);
    if (boxed !== undefined) return plainValue(boxed.value, stack);
    // Its data is where JSON does not look (internal slots, private fields, getters): refused, never written as {}.
    if (isSlotted(object) || Object.keys(object).length === 0) {
      throw new Refusal(
        describe(object),
        "convert it to plain JSON (Object.fromEntries(map), [...set], Array.from(bytes), { name, message }) or give it a toJSON()",
      );
    }
    // Any other class instance is journaled as its own enumerable fields, as JSON writes it.
  }
  stack.push(object);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(object)) {
    let item: unknown;
    try {
      item = copy(object[k], k, stack);
    } catch (error) {
      if (error instanceof Refusal) error.keys.push(k);
      throw error;
    }
    if (item === undefined) continue;
    // "__proto__" is an own key in JSON.parse's result, never the prototype.
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: item, enumerable: true, writable: true, configurable: true });
    else out[k] = item;
  }
  stack.pop();
  return out;
}

// A plain object made in another realm (an iframe, a vm context): its prototype is that realm's Object.prototype.
function isPlainPrototype(proto: unknown): boolean {
  if (!isObjectLike(proto) || Object.getPrototypeOf(proto) !== null) return false;
  const ctor = proto.constructor;
  return typeof ctor === "function" && ctor.name === "Object";
}

// JSON.stringify writes a Number, String or Boolean object as its primitive.
function unboxed(object: object): { value: unknown } | undefined {
  if (object instanceof Number) return { value: Number(object) };
  if (object instanceof String) return { value: String(object) };
  if (object instanceof Boolean) return { value: object.valueOf() };
  return undefined;
}

// Built-ins whose data lives in internal slots, which JSON never writes.
const SLOTTED: (abstract new (...args: never[]) => object)[] = [
  Map,
  Set,
  WeakMap,
  WeakSet,
  ArrayBuffer,
  RegExp,
  Error,
  Date,
  Promise,
];
if (typeof SharedArrayBuffer === "function") SLOTTED.push(SharedArrayBuffer);
if (typeof WeakRef === "function") SLOTTED.push(WeakRef);

function isSlotted(object: object): boolean {
  return ArrayBuffer.isView(object) || SLOTTED.some((type) => object instanceof type);
}

function describe(object: Record<string, unknown>): string {
  if (isSlotted(object)) {
    const name = Object.prototype.toString.call(object).slice(8, -1);
    const shown = object instanceof Error ? object.name || "Error" : name;
    return `${article(shown)} ${shown}`;
  }
  const ctor = object.constructor;
  // Read as `ctor?.name` reads it, whatever ctor is (a primitive's from its prototype).
  const name: unknown = ctor === undefined || ctor === null ? undefined : Reflect.get(Object(ctor), "name", ctor);
  const what =
    typeof name !== "string" || name === "" || name === "Object"
      ? "an object whose prototype is not Object.prototype"
      : `an instance of ${name}`;
  return `${what} with no own fields (JSON would write {})`;
}

function isDate(value: unknown): boolean {
  return value instanceof Date || Object.prototype.toString.call(value) === "[object Date]";
}

function article(word: string): string {
  return /^[AEIO]/i.test(word) ? "an" : "a"; // "a Uint8Array", "an Int8Array"
}

// A path of a deeply nested value is shown by its ends.
function pathText(keys: (string | number)[]): string {
  if (keys.length <= 24) return keys.map(segment).join("");
  return `${keys.slice(0, 12).map(segment).join("")}…(${keys.length - 20} more)…${keys.slice(-8).map(segment).join("")}`;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
function segment(key: string | number): string {
  if (typeof key === "number") return `[${key}]`;
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
