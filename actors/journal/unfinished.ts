// app.resumeUnfinished(): what a desktop app or a tab does at boot. Every execution the catalogue lists
// as running is resumed (recorded steps served from the log, the in-flight ones run again), a few at a
// time; one that cannot be resumed (damaged, its logic unknown, its subject erased) is reported, not thrown.
import type { ExecutionInfo } from "../../stores/types.js";
import { ConfigError } from "../errors.js";
import type { JournaledActor } from "./actor.js";

/** Options of `app.resumeUnfinished`. */
export interface ResumeUnfinishedOptions {
  /** Which unfinished executions to resume (default: every one the catalogue lists as running). */
  filter?: (info: ExecutionInfo) => boolean;
  /** How many resumes run at once. @defaultValue 8 */
  concurrency?: number;
}

/** What `app.resumeUnfinished` did: the actors it resumed, and the executions it could not resume with why. */
export interface ResumeUnfinishedResult {
  resumed: JournaledActor[];
  failed: { executionId: string; error: unknown }[];
}

export async function resumeUnfinished(
  list: () => Promise<ExecutionInfo[]>,
  resume: (executionId: string) => Promise<JournaledActor>,
  options: ResumeUnfinishedOptions = {},
): Promise<ResumeUnfinishedResult> {
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigError("resumeUnfinished.concurrency", `must be a positive integer; got ${String(concurrency)}.`);
  if (options.filter !== undefined && typeof options.filter !== "function")
    throw new ConfigError("resumeUnfinished.filter", "must be a function of the execution's catalogue entry.");
  const filter = options.filter ?? (() => true);
  const unfinished = (await list()).filter((info) => info.status === "running" && filter(info));
  const resumed: JournaledActor[] = [];
  const failed: ResumeUnfinishedResult["failed"] = [];
  let next = 0;
  const worker = async () => {
    while (next < unfinished.length) {
      const { executionId } = unfinished[next++]!;
      await resume(executionId).then(
        (actor) => resumed.push(actor),
        (error: unknown) => failed.push({ executionId, error }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, unfinished.length) }, worker));
  // In catalogue order, whatever order the resumes finished in.
  const order = new Map(unfinished.map((info, i) => [info.executionId, i]));
  resumed.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  failed.sort((a, b) => order.get(a.executionId)! - order.get(b.executionId)!);
  return { resumed, failed };
}
