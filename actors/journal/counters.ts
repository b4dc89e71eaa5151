// Occurrences per child id (a runtime state's `counters`, for default step ids), kept persistent: a
// macrostep that spawns gets a new version, and the one before it stays as it was (the planner is pure,
// and a snapshot being written holds the version it was given). A plain object copied per spawn cost
// O(child ids ever spawned) per macrostep: the agent loop spawns one child id per tool call, so at 1,000
// turns every turn copied about a thousand entries (milliseconds each), live and in every replayed
// macrostep. Here a version is a shared base and a small map of recent entries: a spawn copies the recent
// map only, and folds it into a new base once it outgrows the square root of the base, so a spawn costs
// O(sqrt(n)) entries amortised. Persisted as the same plain object as before (`toJSON`); a restored
// version reads that object in place until its first rebuild (a resume copies nothing).

/** Below this many recent entries the base is never rebuilt (small executions copy a few entries per spawn). */
const MIN_RECENT = 16;

export class Counters {
  private constructor(
    private readonly base: ReadonlyMap<string, number>,
    private readonly recent: ReadonlyMap<string, number>,
    /**
     * The plain object a restored state holds, read in place until the first rebuild of the base folds it
     * in: copying it into a Map at restore cost milliseconds per resume in a fresh page (a thousand entries
     * of a JSON.parse'd object, walked by code not yet compiled), on the path to the restarted call.
     */
    private readonly persisted?: object,
  ) {}

  static readonly empty = new Counters(new Map(), new Map());

  /** The counters a persisted state holds (a plain object of non-negative counts; anything else is skipped). */
  static from(persisted: unknown): Counters {
    return typeof persisted === "object" && persisted !== null
      ? new Counters(new Map(), new Map(), persisted)
      : Counters.empty;
  }

  /** How many times `childId` was spawned (0: never). */
  get(childId: string): number {
    return this.recent.get(childId) ?? this.base.get(childId) ?? this.persistedCount(childId) ?? 0;
  }

  /** A new version where `childId` counts `count`; this one is unchanged. */
  with(childId: string, count: number): Counters {
    const recent = new Map(this.recent).set(childId, count);
    if (recent.size <= MIN_RECENT || recent.size * recent.size <= this.base.size)
      return new Counters(this.base, recent, this.persisted);
    const base = new Map([...this.persistedEntries(), ...this.base]);
    for (const [id, n] of recent) base.set(id, n);
    return new Counters(base, new Map());
  }

  /** The plain object persisted in a snapshot: every child id with its count. */
  toJSON(): Record<string, number> {
    // fromEntries defines every id as an own property (a child id "__proto__" included).
    return Object.fromEntries([...this.persistedEntries(), ...this.base, ...this.recent]);
  }

  private persistedCount(childId: string): number | undefined {
    if (!this.persisted || !Object.hasOwn(this.persisted, childId)) return undefined;
    const count: unknown = Reflect.get(this.persisted, childId);
    return typeof count === "number" ? count : undefined;
  }

  private persistedEntries(): [string, number][] {
    if (!this.persisted) return [];
    return Object.entries(this.persisted).filter((entry): entry is [string, number] => typeof entry[1] === "number");
  }
}
