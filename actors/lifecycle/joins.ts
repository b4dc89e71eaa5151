// sweep(app) and eraseSubject(app, subject): a call joins the sweep (or the erasure of the same subject) running in
// this app, synchronously, so both callers hold the same promise; otherwise it runs one.
import type { EraseSubjectResult } from "../../machines/eraseCoordinator.js";
import { erase } from "./erase.js";
import type { LifecycleHost } from "./host.js";
import { sweepOnce, type SweepOptions, type SweepResult } from "./sweep.js";

export type { EraseSubjectResult, SweepOptions, SweepResult };

/**
 * Runs the content sweep as a journaled execution `loom.sweep:<n>`. An unfinished sweep (a crash mid-sweep)
 * is resumed and finished first, with the options it was started with, and its result is returned; so is
 * a sweep already running in this app.
 */
export function runSweep(host: LifecycleHost, options: SweepOptions): Promise<SweepResult> {
  const { state } = host;
  if (state.sweep) return state.sweep;
  const sweep = sweepOnce(host, options).finally(() => (state.sweep = undefined));
  state.sweep = sweep;
  return sweep;
}

/**
 * Erases a subject with the eraseCoordinator machine. An unfinished coordinator (a crash mid-erasure) is
 * resumed and finished; otherwise a new one is started. A repeated erase is a successful no-op.
 */
export function runErase(host: LifecycleHost, subject: string): Promise<EraseSubjectResult> {
  const running = host.state.erasures;
  const joined = running.get(subject);
  if (joined) return joined;
  const erasure = erase(host, subject).finally(() => running.delete(subject));
  running.set(subject, erasure);
  return erasure;
}
