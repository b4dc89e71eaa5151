// The claim-check offloads in flight in this process: a blob is put before the STEP_COMPLETED that cites
// it is appended, and a sweep scanning (or an erasure planning) in between must not take it for uncited.
// (Another process's offloads are covered only by the touch cutoff: see docs/security.md.)
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import type { RuntimeBus } from "../bus.js";

/**
 * Addresses offloaded in this process whose citing STEP_COMPLETED is not journaled yet, by any app: one
 * app's append may still land after it was closed, while another app over the same stores sweeps. So this
 * one registry is shared by every app of the process, not kept per app. Keyed by address (a content hash),
 * so it holds across store wrappers; each address maps to the `<executionId>\0<stepId>` steps that put it.
 */
export const inflightOffloads = new Map<string, Set<string>>();

const stepKey = (executionId: string, stepId: string) => `${executionId}\u0000${stepId}`;

/** A copy of the offloads in flight now, for `inflightOutside` to be asked later about this moment. */
export function inflightNow(): Map<string, ReadonlySet<string>> {
  return new Map([...inflightOffloads].map(([address, steps]) => [address, new Set(steps)]));
}

/**
 * The addresses in flight (now, or in the copy given) that a step of an execution outside `own` put: what an erasure of the
 * subject owning `own` must not delete, since the append citing it may land after the erasure read
 * that execution's log (ADR 0140 D8, D12).
 */
export function inflightOutside(
  own: ReadonlySet<string>,
  inflight: ReadonlyMap<string, ReadonlySet<string>> = inflightOffloads,
): Set<string> {
  const addresses = new Set<string>();
  for (const [address, steps] of inflight) {
    for (const step of steps) if (!own.has(step.slice(0, step.indexOf("\u0000")))) addresses.add(address);
  }
  return addresses;
}

/**
 * Per watcher (an erase coordinator, by execution id): every offload reported in this process since it began
 * to watch, cited since or not, in the shape of `inflightOffloads`. An offload whose put predates the erasure's
 * touch cutoff but is reported after its plan began may be cited by an append that lands before the delete
 * step: neither the plan's log reads nor the in-flight set at the delete would see it.
 */
const watches = new Map<string, Map<string, Set<string>>>();

/** Starts recording, for `watcher`, the offloads reported from now on (until it ends or `unwatchOffloads`). */
export function watchOffloads(watcher: string): void {
  if (!watches.has(watcher)) watches.set(watcher, new Map());
}

/** What `watcher` recorded (empty when it is not watching: a coordinator resumed in another process). */
export function watchedOffloads(watcher: string): ReadonlyMap<string, ReadonlySet<string>> {
  return watches.get(watcher) ?? new Map();
}

export function unwatchOffloads(watcher: string): void {
  watches.delete(watcher);
}

/** Tracks the offloads an app's bus reports until the STEP_COMPLETED citing each is journaled. */
export function trackInflightOffloads(bus: RuntimeBus): void {
  bus.on("offload", ({ executionId, stepId, address }) => {
    const steps = inflightOffloads.get(address) ?? new Set<string>();
    steps.add(stepKey(executionId, stepId));
    inflightOffloads.set(address, steps);
    for (const watched of watches.values())
      watched.set(address, new Set(watched.get(address)).add(stepKey(executionId, stepId)));
  });
  // A watcher that ended (its erasure finished or failed) records nothing more.
  bus.on("ended", ({ executionId }) => void watches.delete(executionId));
  const settle = (isDone: (step: string) => boolean) => {
    for (const [address, steps] of inflightOffloads) {
      for (const step of steps) if (isDone(step)) steps.delete(step);
      if (steps.size === 0) inflightOffloads.delete(address);
    }
  };
  bus.on("append", ({ executionId, records }) => {
    if (inflightOffloads.size === 0) return;
    const done = new Set(
      records
        .filter((r) => r.type === STEP_COMPLETED || r.type === STEP_FAILED)
        .map((r) => stepKey(executionId, String(r.stepId))),
    );
    if (done.size > 0) settle((step) => done.has(step));
  });
  // An ended execution journals no further outcome: an offload of a step it abandoned (app.stop, eraseSubject,
  // its state left) is no longer in flight, so the sweep may reclaim the uncited blob. (The claim-check does
  // not report an offload whose step was abandoned before its blob was written.)
  bus.on("ended", ({ executionId }) => {
    if (inflightOffloads.size === 0) return;
    const prefix = `${executionId}\u0000`;
    settle((step) => step.startsWith(prefix));
  });
}
