// Patching in place (docs/upgrades.md): `patched(changeId)` is a guard that is true for an execution that
// takes the change and false for one whose journal predates it; `patchedValue(changeId, a, b)` is an
// `agentLoop$` option value decided the same way. The decision is the runtime's, made while it plans a
// macrostep (actors/journal/patches.ts).
//
// `current` below is the one mutable module variable in machines/, and why it must be one: XState hands a
// guard only the context and the event, so the execution being planned can reach its guards no other way.
// Only the planner writes it (`withPatchScope`), around XState's `transition`, which is synchronous, and
// restores it before returning: a guard reads the decision of the execution being planned and no other,
// and outside a plan it reads nothing (the guard answers the new path). No I/O, no clock.

/** What the planner answers for one execution while it plans one of its macrosteps. */
export interface PatchScope {
  /** The decision for `changeId` in this execution; `deprecated` asks for the cleanup form (always the new path). */
  decide(changeId: string, deprecated: boolean): boolean;
}

let current: PatchScope | undefined;

/** Runs `plan` with `scope` answering every `patched` asked meanwhile (the planner's call; nested scopes restore the outer one). */
export function withPatchScope<T>(scope: PatchScope, plan: () => T): T {
  const outer = current;
  current = scope;
  try {
    return plan();
  } finally {
    current = outer;
  }
}

/** A guard (and a boolean query) for one change: what `patched` and `deprecatePatch` return. */
export interface PatchGuard {
  (): boolean;
  /** The change this guard asks about. */
  readonly changeId: string;
  /** True for `deprecatePatch(changeId)`. */
  readonly deprecated: boolean;
}

/** A value of an `agentLoop$` option that depends on a patch: what `patchedValue(changeId, ifPatched, otherwise)` returns. */
export interface PatchedValue<T> {
  readonly changeId: string;
  readonly ifPatched: T;
  readonly otherwise: T;
}

const CHANGE_ID = /^[\w.:-]+$/;

function checkChangeId(changeId: unknown, fn: string): asserts changeId is string {
  // machines/ throws plain TypeErrors (no runtime error classes here); the message names the fix.
  if (typeof changeId !== "string" || !CHANGE_ID.test(changeId)) {
    throw new TypeError(
      `${fn}(changeId): a non-empty id of letters, digits, '_', '.', ':', '-' (e.g. "greet-by-name"); got ${JSON.stringify(changeId) ?? String(changeId)}.`,
    );
  }
}

// Outside a planning scope (a caller's own `snapshot.can(...)`, a machine read in a visualizer) nothing is
// decided or journaled: the guard answers the new path, as a new execution would take it.
function ask(changeId: string, deprecated: boolean): boolean {
  return current ? current.decide(changeId, deprecated) : true;
}

/**
 * A guard that is true for an execution that takes change `changeId` and false for one whose journal
 * predates it. The first live macrostep that asks journals a `loom.patch.marked` record and takes the new
 * path; a replay takes the new path exactly where the journal has that marker, so an execution journaled
 * before the change keeps the old path, on replay and after it. Decided once per execution. Always a
 * guard: for an `agentLoop$` option value that depends on a change, use `patchedValue`.
 *
 * @example
 * on: { GREET: [{ guard: patched("greet-by-name"), target: "greetingByName" }, { target: "greeting" }] }
 */
export function patched(changeId: string): PatchGuard;
export function patched(changeId: string, ...values: unknown[]): PatchGuard {
  checkChangeId(changeId, "patched");
  // The value form had this name before: say where it went rather than return a guard where a value was meant.
  if (values.length > 0)
    throw new TypeError(
      `patched(changeId) takes one argument and is a guard; for an option value that depends on a change, use patchedValue(${JSON.stringify(changeId)}, ifPatched, otherwise).`,
    );
  return Object.assign(() => ask(changeId, false), { changeId, deprecated: false });
}

/**
 * An `agentLoop$` option value that depends on change `changeId`: `ifPatched` for an execution that takes
 * the change, `otherwise` for one whose journal predates it, decided (and journaled) as `patched` decides.
 *
 * @example
 * agentLoop$({ id: "researcher", model: "model", maxTurns: patchedValue("more-turns", 30, 10) })
 */
export function patchedValue<T>(changeId: string, ifPatched: T, otherwise: T): PatchedValue<T> {
  checkChangeId(changeId, "patchedValue");
  return { changeId, ifPatched, otherwise };
}

/**
 * The cleanup step of a patch, once no execution journaled before `changeId` remains (check with
 * `checkReplay(app, logic)`): always the new path; a live execution still journals the marker (so a deployment
 * running `patched(changeId)` replays it), and a journal with or without the marker replays.
 *
 * @example
 * on: { GREET: [{ guard: deprecatePatch("greet-by-name"), target: "greetingByName" }, { target: "greeting" }] }
 */
export function deprecatePatch(changeId: string): PatchGuard {
  checkChangeId(changeId, "deprecatePatch");
  return Object.assign(() => ask(changeId, true), { changeId, deprecated: true });
}

/** True for what `patchedValue` returns. */
export function isPatchedValue(value: unknown): value is PatchedValue<unknown> {
  return (
    typeof value === "object" && value !== null && "changeId" in value && "ifPatched" in value && "otherwise" in value
  );
}

/** The value of an option that may depend on a patch, decided for the execution being planned. */
export function patchedValueOf<T>(value: T | PatchedValue<T>): T {
  if (!isPatchedValue(value)) return value;
  return ask(value.changeId, false) ? (value.ifPatched as T) : (value.otherwise as T);
}

/** Both values an option may take (one for a plain value): what a factory validates. */
export function patchedChoices<T>(value: T | PatchedValue<T> | undefined): T[] {
  if (value === undefined) return [];
  return isPatchedValue(value) ? [value.ifPatched as T, value.otherwise as T] : [value as T];
}
