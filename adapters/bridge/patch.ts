// The bridge's snapshot patches: the owner diffs each new snapshot against the JSON copy the UI holds and
// sends the changes; the UI applies them to its copy without mutating it (a changed node is a new object,
// an unchanged one keeps its identity), so a long run costs the channel what each macrostep changed.
// Browser-safe: no Node import.

/** Where a change applies: object keys and array indexes from the snapshot's root. */
export type PatchPath = (string | number)[];

/** One change to a JSON value: set a value, delete a key, append to an array, cut an array to a length. */
export type PatchOp =
  | { p: PatchPath; set: unknown }
  | { p: PatchPath; del: true }
  | { p: PatchPath; push: unknown[] }
  | { p: PatchPath; len: number };

/**
 * Diffs `next` (any value, read as JSON.stringify reads it) against `before` (a plain JSON value, the UI's
 * copy), appends the changes to `ops` and returns the new copy (`before` itself when nothing changed;
 * unchanged subtrees are shared with it). Appending to an array is sent as `push`, so a growing transcript
 * costs its new messages only.
 */
export function diffJson(before: unknown, next: unknown, ops: PatchOp[], path: PatchPath = [], key = ""): unknown {
  const value = jsonValue(next, key);
  if (value === null || typeof value !== "object") {
    if (Object.is(before, value)) return before;
    ops.push({ p: path, set: value });
    return value;
  }
  if (Array.isArray(value)) {
    if (!Array.isArray(before)) return replace(value, ops, path);
    let changed = false;
    const common = Math.min(before.length, value.length);
    const out: unknown[] = new Array<unknown>(common);
    for (let i = 0; i < common; i++) {
      const item = diffJson(before[i], inArray(value[i], i), ops, [...path, i], String(i));
      out[i] = item;
      if (item !== before[i]) changed = true;
    }
    if (value.length > before.length) {
      const added = value.slice(common).map((item, i) => plainJson(inArray(item, common + i)));
      ops.push({ p: path, push: added });
      out.push(...added);
      changed = true;
    } else if (value.length < before.length) {
      ops.push({ p: path, len: value.length });
      changed = true;
    }
    return changed ? out : before;
  }
  if (before === null || typeof before !== "object" || Array.isArray(before)) return replace(value, ops, path);
  const old = before as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let changed = false;
  for (const field of Object.keys(value)) {
    const raw = (value as Record<string, unknown>)[field];
    if (omitted(jsonValue(raw, field))) continue;
    const item = Object.hasOwn(old, field)
      ? diffJson(old[field], raw, ops, [...path, field], field)
      : replace(raw, ops, [...path, field], field);
    out[field] = item;
    if (item !== old[field] || !Object.hasOwn(old, field)) changed = true;
  }
  for (const field of Object.keys(old))
    if (!Object.hasOwn(out, field)) {
      ops.push({ p: [...path, field], del: true });
      changed = true;
    }
  return changed ? out : before;
}

/** Applies `ops` to `root` (a plain JSON value) without mutating it: each node on a changed path is copied once. */
export function applyPatch<T>(root: T, ops: readonly PatchOp[]): T {
  const copied = new WeakSet<object>();
  const own = (node: unknown): Record<string | number, unknown> => {
    const copy = (Array.isArray(node) ? [...node] : { ...(node as object) }) as Record<string | number, unknown>;
    copied.add(copy);
    return copy;
  };
  let top: unknown = root;
  for (const op of ops) {
    if (op.p.length === 0 && "set" in op) {
      top = op.set;
      continue;
    }
    // Walk to the op's target, copying every node on the way that this patch has not copied yet.
    const holder: { value: unknown } = { value: top };
    let parent: Record<string | number, unknown> = holder as unknown as Record<string | number, unknown>;
    let field: string | number = "value";
    for (const step of op.p) {
      let node = parent[field];
      if (!copied.has(node as object)) parent[field] = node = own(node);
      parent = node as Record<string | number, unknown>;
      field = step;
    }
    if ("set" in op) parent[field] = op.set;
    else if ("del" in op) delete parent[field];
    else {
      let target = parent[field] as unknown[];
      if (!copied.has(target)) parent[field] = target = own(target) as unknown as unknown[];
      if ("push" in op) target.push(...op.push);
      else target.length = op.len;
    }
    top = holder.value;
  }
  return top as T;
}

function replace(value: unknown, ops: PatchOp[], path: PatchPath, key = ""): unknown {
  const copy = plainJson(jsonValue(value, key));
  ops.push({ p: path, set: copy });
  return copy;
}

// As JSON.stringify reads a value: its toJSON first, non-finite numbers as null, boxed primitives unboxed.
function jsonValue(value: unknown, key: string): unknown {
  let out = value;
  if (out !== null && typeof out === "object" && typeof (out as { toJSON?: unknown }).toJSON === "function")
    out = (out as { toJSON(key: string): unknown }).toJSON(key);
  if (out instanceof Number || out instanceof String || out instanceof Boolean) out = out.valueOf();
  if (typeof out === "number" && !Number.isFinite(out)) return null;
  return out;
}

// A value JSON.stringify leaves out of an object (and writes as null in an array).
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

function inArray(value: unknown, index: number): unknown {
  return omitted(jsonValue(value, String(index))) ? null : value;
}

function plainJson(value: unknown): unknown {
  return omitted(value) ? undefined : JSON.parse(JSON.stringify(value));
}
