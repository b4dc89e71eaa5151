// What an app holds per execution it runs: the live Execution, the stores' single-writer lease while it
// runs here (IndexedDB: Web Locks across tabs), and its outcome (journal/outcomes.ts). Ending,
// failing, forgetting and closing give each back in one place. Also the start, resume or submit of each
// execution under way, so that one app never rebuilds an execution twice at once nor hands it to the fleet
// while it runs it.
import type { WriterLease } from "../../stores/types.js";
import { DEFAULT_SETTLED_CACHE, type LoomConfig } from "../config.js";
import { DuplicateExecutionError, SubmitConflictError } from "../errors.js";
import type { JournalCodec } from "./journal.js";
import { SubjectCodec } from "./sealing.js";
import type { JournaledActor } from "./actor.js";
import type { Execution } from "./execution.js";
import type { HostedExecution } from "./host.js";
import { Outcomes } from "./outcomes.js";

/** A start, resume or submit of one execution under way in an app, until it is done or refused. */
export type Admission =
  | { readonly kind: "start" | "resume"; readonly actor: Promise<JournaledActor> }
  | { readonly kind: "submit"; readonly actor: Promise<void> };

export class RunningExecutions {
  readonly outcomes: Outcomes;
  private readonly executions = new Map<string, Execution>();
  private readonly writers = new Map<string, WriterLease>();
  // At most one per execution: a second rebuild would run the in-flight steps again and lose the seq race (ConcurrencyError).
  private readonly admissions = new Map<string, Admission>();

  /** @param codec the app's journal codec: what it cached of an execution is dropped once the app lets it go. */
  constructor(
    private readonly config: Pick<LoomConfig, "stores" | "execution">,
    private readonly codec: JournalCodec | undefined,
  ) {
    this.outcomes = new Outcomes(config.execution?.settledCache ?? DEFAULT_SETTLED_CACHE);
  }

  get(executionId: string): Execution | undefined {
    return this.executions.get(executionId);
  }

  has(executionId: string): boolean {
    return this.executions.has(executionId);
  }

  /** True while this app starts, resumes or runs `executionId`: a second runner anywhere would race it. */
  runsHere(executionId: string): boolean {
    return this.executions.has(executionId) || this.admissions.has(executionId);
  }

  /**
   * What app.result waits on here: the outcome of an execution this app runs, or `after()` once the start or
   * resume of it under way settles (either way); undefined when this app has none of it.
   */
  resultHere(executionId: string, after: () => Promise<unknown>): Promise<unknown> | undefined {
    if (this.executions.has(executionId)) return this.outcomes.promise(executionId);
    return this.admissions.get(executionId)?.actor.then(after, after);
  }

  /** Runs `start` as the one admission of `executionId`; DuplicateExecutionError when this app starts, resumes or runs it already. */
  startOnce(executionId: string, start: () => Promise<JournaledActor>): Promise<JournaledActor> {
    if (this.runsHere(executionId)) return Promise.reject(new DuplicateExecutionError(executionId));
    return this.claim(executionId, { kind: "start", actor: start() });
  }

  /** Runs `submit` as the one admission of `executionId`; SubmitConflictError when this app starts, resumes or runs it (the fleet would be its second runner). */
  async submitOnce(executionId: string, submit: () => Promise<void>): Promise<void> {
    // A submit under way is waited for: this one then finds its start journaled, the same (a no-op) or not (a conflict).
    for (
      let admission = this.admissions.get(executionId);
      admission?.kind === "submit";
      admission = this.admissions.get(executionId)
    )
      await admission.actor.catch(() => undefined);
    if (this.runsHere(executionId))
      throw new SubmitConflictError(executionId, "runner", "this app runs it (app.start or app.resume)");
    return this.claim(executionId, { kind: "submit", actor: submit() });
  }

  /**
   * One resume per execution at a time: joins the resume under way (the same actor, once recovered: an
   * execution is registered before its recovery ends, and not handed out before), or the start under way
   * (refused, e.g. the id had a log: as if it had not been called); else the live execution; else runs `resume`.
   */
  async resumeOnce(executionId: string, resume: () => Promise<JournaledActor>): Promise<JournaledActor> {
    for (;;) {
      const admission = this.admissions.get(executionId);
      if (admission?.kind === "resume") return admission.actor;
      if (!admission) break;
      if (admission.kind === "submit") await admission.actor.catch(() => undefined);
      else {
        const started = await admission.actor.catch(() => undefined);
        if (started) return started;
      }
    }
    // No await from the last look to the claim: a caller that comes now joins this one.
    const live = this.executions.get(executionId);
    if (live && !live.failure) return live.ref;
    return this.claim(executionId, { kind: "resume", actor: resume() });
  }

  // Registered before it returns; forgotten once the admission settles.
  private claim<A extends Admission>(executionId: string, admission: A): A["actor"] {
    this.admissions.set(executionId, admission);
    const release = () => {
      if (this.admissions.get(executionId) === admission) this.admissions.delete(executionId);
    };
    const settled: Promise<unknown> = admission.actor;
    settled.then(release, release);
    return admission.actor;
  }

  /**
   * Takes the writer lease, registers the execution and opens its outcome, then runs `begin` (its start or
   * recovery); if that throws, the execution is unregistered and its lease given back.
   */
  async admit(execution: Execution, begin: () => Promise<void>, options: { fresh?: boolean } = {}): Promise<void> {
    const { executionId } = execution;
    if (this.config.stores.acquireWriter) await this.takeWriter(executionId); // stores without leases: no await
    this.executions.set(executionId, execution);
    this.outcomes.open(executionId, options.fresh);
    try {
      await begin();
    } catch (error) {
      this.executions.delete(executionId);
      await this.releaseWriter(executionId);
      throw error;
    }
  }

  /** The execution ended: its outcome is kept (bounded, oldest evicted); the execution and its state are let go. */
  ended(execution: HostedExecution): void {
    const { executionId } = execution;
    this.outcomes.settle(execution);
    void this.releaseWriter(executionId);
    if (this.executions.get(executionId) === execution) this.executions.delete(executionId);
    if (this.codec instanceof SubjectCodec) this.codec.forget(executionId);
  }

  /** The journal refused a write: the outcome rejects with its error; the entry stays until a resume replaces it. */
  failed(execution: HostedExecution, error: unknown): void {
    this.outcomes.reject(execution.executionId, error);
    void this.releaseWriter(execution.executionId);
  }

  /** Drops everything held of `executionId` (its history was deleted or its subject erased), halting a live one. */
  forget(executionId: string, options: { halt?: boolean } = {}): Promise<void> {
    if (options.halt) this.executions.get(executionId)?.halt();
    this.executions.delete(executionId);
    this.outcomes.forget(executionId);
    if (this.codec instanceof SubjectCodec) this.codec.forget(executionId);
    return this.releaseWriter(executionId);
  }

  /** Forgets (halting live ones) `executionIds` and every execution of `subject` held here, live or ended; returns their ids. */
  forgetSubject(subject: string, executionIds: readonly string[]): string[] {
    const live = [...this.executions].filter(([, execution]) => execution.subject === subject).map(([id]) => id);
    const ids = new Set([...executionIds, ...live, ...this.outcomes.settledOfSubject(subject)]);
    for (const id of ids) void this.forget(id, { halt: true });
    return [...ids];
  }

  /** Halts every execution, gives back every lease, and forgets every outcome (app.result reads the journal then). */
  async close(): Promise<void> {
    for (const execution of this.executions.values()) execution.halt();
    // A graceful shutdown (execution.snapshotOnClose): once its queued work settled, a live execution whose last snapshot is behind its head gets one there.
    if (this.config.execution?.snapshotOnClose === true && this.config.execution.snapshotEvery !== false) {
      await Promise.all(
        [...this.executions.values()].map((execution) =>
          execution.whenSettled().then(() => execution.maybeSnapshot(1)),
        ),
      );
    }
    await Promise.all([...this.writers.keys()].map((id) => this.releaseWriter(id)));
    this.executions.clear();
    this.outcomes.clear();
  }

  private async takeWriter(executionId: string): Promise<void> {
    if (!this.config.stores.acquireWriter || this.writers.has(executionId)) return;
    this.writers.set(executionId, await this.config.stores.acquireWriter(executionId));
  }

  private async releaseWriter(executionId: string): Promise<void> {
    const lease = this.writers.get(executionId);
    this.writers.delete(executionId);
    await lease?.release().catch(() => undefined);
  }
}
