// defineConfig: the app's options in named groups, validated whole at createApp (never mid-run).
import type { AnyStateMachine, InspectionEvent, Observer } from "xstate";
import type { KeyStore, Stores } from "../stores/types.js";
import type { Warning } from "./bus.js";
import { validateCapabilities, type CapabilitiesOptions } from "./effects/capabilities.js";
import type { Clock } from "./clock.js";
import { subtleCrypto, utf8Length } from "../stores/bytes.js";
import { RUNTIME_ID_PREFIX } from "./constants.js";
import { ConfigError } from "./errors.js";
import type { RetentionRule } from "../machines/retention.js";
import { checkQueues, type QueueOptions } from "./fleet/queues.js";
import type { Effect, EffectMiddleware } from "./effects/effect.js";
import type { ClaimCheckConfig } from "./effects/claimCheckConfig.js";

/** Redaction: patterns whose matches become "[REDACTED]", or a function over each string. */
export type RedactOption = (RegExp | string)[] | ((text: string) => string);

/** The `execution` group: the effect chain's middleware, snapshots and the claim-check. */
export interface ExecutionOptions {
  /** User middleware, outermost first, run inside the kill switch, claim-check and redaction. */
  effectMiddleware?: EffectMiddleware[];
  /**
   * Journal a snapshot of the folded state every N records so a resume reads the snapshot plus the tail.
   * @defaultValue 64
   */
  snapshotEvery?: number | false;
  /**
   * A graceful shutdown: `app.close()` writes a snapshot at the head of every live execution whose last snapshot
   * is behind it (once its queued work settled, before the writer leases are given back), so the next resume
   * reads that snapshot and replays no tail. A crash leaves the tail to replay as before. It costs `close()`
   * one snapshot write per such execution; `snapshotEvery: false` turns it off too. See docs/storage.md.
   * @defaultValue false
   */
  snapshotOnClose?: boolean;
  /** ADR 0140: offload listed tools' large results to a content store (see docs/scaling.md). */
  claimCheck?: ClaimCheckConfig;
  /**
   * How many ended executions' outcomes (status and serialized output or error) the app keeps in memory
   * for `app.result`; an ended execution's state is released at once, and past this many `app.result`
   * reads the outcome from the journal. 0 keeps none.
   * @defaultValue DEFAULT_SETTLED_CACHE (256)
   */
  settledCache?: number;
  /**
   * ADR 0012 D8: journal a digest of the context in every TRANSITION, so a replay that derives another context
   * (a machine reading `Math.random` or `Date.now` in `assign` or a guard) fails with `NonDeterminismError` at
   * that seq instead of diverging silently. A log with digests is checked by every replay, whatever this option
   * says where it is replayed. Costs one JSON text of the context per macrostep (docs/actors.md).
   * @defaultValue false
   */
  checkDeterminism?: boolean;
  /** ADR 0012 D10: the limits of a tree of child executions. */
  children?: ChildrenLimits;
}

/** `execution.children`: how deep a tree of child executions may grow, and how many children one macrostep may start. */
export interface ChildrenLimits {
  /**
   * How many levels of children below its root a tree may have (a root's child is level 1); a deeper child is not
   * started and its parent's step fails with `ChildLimitError`.
   * @defaultValue 16
   */
  maxDepth?: number;
  /**
   * How many child machines one macrostep may start; more ends the execution in error with `ChildLimitError`.
   * @defaultValue 1000
   */
  maxFanOut?: number;
}

/** `execution.children` by default: 16 levels, 1,000 children per macrostep. */
export const DEFAULT_CHILDREN_LIMITS = { maxDepth: 16, maxFanOut: 1_000 } as const;

/** `execution.settledCache` by default: ended executions whose outcome `app.result` answers from memory. */
export const DEFAULT_SETTLED_CACHE = 256;

/** The `security` group: per-subject sealing and secret redaction. */
export interface SecurityOptions {
  /** Seal each record of a subject's executions under that subject's key (AES-GCM), held by `keys` (usually `stores.keys`). */
  crypto?: { keys: KeyStore };
  /** Scrub secrets from every effect result before it is journaled or stored. */
  redact?: RedactOption;
}

/** The `compliance` group: erasure. */
export interface ComplianceOptions {
  /**
   * Enables `eraseSubject(app, subject)` (loomwork/lifecycle); with execution.claimCheck, requires a claim-check store with `delete()`
   * (refused at boot otherwise). See docs/security.md.
   */
  erase?: boolean;
}

/** The `observability` group: warnings and XState inspection. */
export interface ObservabilityOptions {
  /** Receives warnings; a throwing sink never fails a run. */
  onWarn?: (warning: Warning) => void;
  /** Receives XState inspection events for every journaled actor (live and replayed). */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/** The app's configuration, in named groups; validated whole by `createApp`. */
export interface LoomConfig {
  /** The event, content and key stores the app runs on (`memoryStores()`, `fsStores(...)`, `indexedDbStores(...)`, `postgresStores(...)`). */
  stores: Stores;
  /** The effects the machines' steps run, by the id a step invokes (`createLlmEffect`, `createToolEffect`, `createTaskEffect`). */
  effects: Record<string, Effect>;
  /** Machines a fresh app may resume by id (`app.resume(id)` finds the logic by the journaled logic id). */
  logics?: AnyStateMachine[];
  /** The clock that stamps records and arms timers. @defaultValue the real clock */
  clock?: Clock;
  /** The effect chain's middleware, snapshots, claim-check and ended-outcome cache. */
  execution?: ExecutionOptions;
  /** Per-subject sealing of the journal and redaction of secrets from effect results. */
  security?: SecurityOptions;
  /** Whether the app may erase a data subject (`eraseSubject(app, subject)`). */
  compliance?: ComplianceOptions;
  /** Where warnings and XState inspection events go. */
  observability?: ObservabilityOptions;
  /** The capability ring the app installs around every effect: grants, quotas, guardRequest, retry, timeoutMs. */
  capabilities?: CapabilitiesOptions;
  /**
   * Queues of the fleet (flow control) by name: limits on the executions `app.submit({ queue, key, priority })` puts
   * on them, counted across the fleet (loomwork/postgres). Checked on every store; enforced by the fleet's workers.
   * @example
   * defineConfig({ stores, effects, queues: { perUser: { concurrency: 20, perKey: 1, rate: { limit: 10, periodMs: 60_000 } } } });
   */
  queues?: Record<string, QueueOptions>;
  /**
   * How long ended executions are kept whole, and what is left of them after: applied by `applyRetention(app)`
   * (loomwork/lifecycle), as a journaled execution (docs/storage.md, "Retention").
   */
  retention?: RetentionConfig;
}

/** The `retention` option: a default rule (`keepFor`, `keep`) and rules by logic id. */
export interface RetentionConfig {
  /** Milliseconds after an execution's tree ended before it is removed (the default rule; absent: only `logics`). */
  keepFor?: number;
  /** What remains of it: `"summary"` (outcome, usage, ids, times) or `"nothing"`. @defaultValue "summary" */
  keep?: RetentionRule["keep"];
  /** Rules by logic id (a machine's id, of a tree's root), over the default. */
  logics?: Record<string, RetentionRule>;
}

/**
 * Declares an app's configuration; validated by `createApp`.
 *
 * @example
 * const app = createApp(defineConfig({ stores: memoryStores(), effects: { search } }));
 */
export function defineConfig<const C extends LoomConfig>(config: C): C {
  return config;
}

/** The grouped options: each a key of LoomConfig holding an object of the named keys. */
const GROUP_NAMES = [
  "execution",
  "security",
  "compliance",
  "observability",
  "capabilities",
] as const satisfies readonly (keyof LoomConfig)[];
const GROUPS: Record<(typeof GROUP_NAMES)[number], readonly string[]> = {
  execution: [
    "effectMiddleware",
    "snapshotEvery",
    "snapshotOnClose",
    "claimCheck",
    "settledCache",
    "checkDeterminism",
    "children",
  ],
  security: ["crypto", "redact"],
  compliance: ["erase"],
  observability: ["onWarn", "inspect"],
  capabilities: ["grants", "quotas", "guardRequest", "retry", "timeoutMs"],
};
const TOP_LEVEL: readonly string[] = ["stores", "effects", "logics", "clock", "queues", "retention", ...GROUP_NAMES];
/** Options nested one level deeper than a group, for naming their path when spelled flat. */
const NESTED: Record<string, string> = {
  maxModelCalls: "capabilities: { quotas: { maxModelCalls",
  maxTokens: "capabilities: { quotas: { maxTokens",
};

/**
 * Checks one retention rule (`retention`, or one of `retention.logics`): `keepFor` a finite number of ms >= 0, `keep`
 * "summary" or "nothing".
 */
export function checkRetentionRule(rule: unknown, path: string): asserts rule is RetentionRule {
  if (typeof rule !== "object" || rule === null) throw new ConfigError(path, "an object { keepFor, keep? }.");
  const keepFor = "keepFor" in rule ? rule.keepFor : undefined;
  const keep = "keep" in rule ? rule.keep : undefined;
  if (typeof keepFor !== "number" || !Number.isFinite(keepFor) || keepFor < 0)
    throw new ConfigError(`${path}.keepFor`, `milliseconds >= 0, got ${JSON.stringify(keepFor)}.`);
  if (keep !== undefined && keep !== "summary" && keep !== "nothing")
    throw new ConfigError(`${path}.keep`, `"summary" or "nothing", got ${JSON.stringify(keep)}.`);
}

// `retention`: a default rule and rules by logic, each checked; nothing else.
function validateRetention(retention: RetentionConfig | undefined): void {
  if (retention === undefined) return;
  if (typeof retention !== "object" || retention === null)
    throw new ConfigError("retention", "an object { keepFor, keep?, logics? }.");
  for (const key of Object.keys(retention))
    if (!["keepFor", "keep", "logics"].includes(key))
      throw new ConfigError(`retention.${key}`, "unknown option. Known: keepFor, keep, logics.");
  if (retention.keepFor !== undefined || retention.keep !== undefined)
    checkRetentionRule({ keepFor: retention.keepFor, keep: retention.keep }, "retention");
  if (retention.logics !== undefined) {
    if (typeof retention.logics !== "object" || retention.logics === null)
      throw new ConfigError("retention.logics", "an object of rules { keepFor, keep? } by logic id.");
    for (const [logicId, rule] of Object.entries(retention.logics))
      checkRetentionRule(rule, `retention.logics.${logicId}`);
  }
}

/** Whether a value passes for a state machine: truthy, with a `transition` function and a `root`. */
function isMachineLike(l: unknown): boolean {
  return (
    !!l &&
    (typeof l === "object" || typeof l === "function") &&
    "transition" in l &&
    typeof l.transition === "function" &&
    "root" in l
  );
}

/** Refuses unknown keys and flat spellings of grouped options, naming the grouped path. */
export function validateConfig(config: LoomConfig): void {
  // No WebCrypto (a page that is not a secure context) fails here at boot, not in the first run's hashing.
  subtleCrypto("createApp");
  if (typeof config !== "object" || config === null) throw new ConfigError("(root)", "defineConfig takes an object.");
  for (const key of Object.keys(config)) {
    if (TOP_LEVEL.includes(key)) continue;
    const group = GROUP_NAMES.find((g) => GROUPS[g].includes(key));
    if (group) throw new ConfigError(key, `"${key}" is a grouped option: write it as ${group}: { ${key}: ... }.`);
    if (NESTED[key]) throw new ConfigError(key, `"${key}" is a grouped option: write it as ${NESTED[key]}: ... } }.`);
    throw new ConfigError(key, `unknown option "${key}". Known options: ${TOP_LEVEL.join(", ")}.`);
  }
  checkQueues(config.queues);
  for (const group of GROUP_NAMES) {
    const keys = GROUPS[group];
    const value: unknown = config[group];
    if (value === undefined) continue;
    if (typeof value !== "object" || value === null)
      throw new ConfigError(group, `expected an object with ${keys.join(", ")}.`);
    for (const key of Object.keys(value)) {
      if (keys.includes(key)) continue;
      const home = GROUP_NAMES.find((g) => GROUPS[g].includes(key));
      if (home)
        throw new ConfigError(
          `${group}.${key}`,
          `"${key}" belongs to another group: write it as ${home}: { ${key}: ... }.`,
        );
      if (NESTED[key])
        throw new ConfigError(`${group}.${key}`, `"${key}" is nested deeper: write it as ${NESTED[key]}: ... } }.`);
      throw new ConfigError(`${group}.${key}`, `unknown option. Known ${group} options: ${keys.join(", ")}.`);
    }
  }
  const { stores, effects } = config;
  if (!stores || typeof stores.events?.append !== "function") {
    throw new ConfigError(
      "stores",
      "required: { events, content, keys }, e.g. memoryStores(), await fsStores({ dir }) or await indexedDbStores({ name }).",
    );
  }
  if (!effects || typeof effects !== "object")
    throw new ConfigError("effects", "required: an object of named effects (createToolEffect, createLlmEffect, ...).");
  for (const [id, effect] of Object.entries(effects)) {
    if (!effect || typeof effect.run !== "function" || !["llm", "tool", "task"].includes(effect.kind)) {
      throw new ConfigError(
        `effects.${id}`,
        "not an effect: build it with createToolEffect(fn), createLlmEffect(model) or createSummarizerEffect(model).",
      );
    }
    // The runtime's internal effects (sweep, erasure) live under "loom."; a user effect may not shadow them.
    if (id.startsWith(RUNTIME_ID_PREFIX))
      throw new ConfigError(
        `effects.${id}`,
        `effect ids starting with "${RUNTIME_ID_PREFIX}" are reserved for the runtime: rename it.`,
      );
  }
  if (
    config.logics !== undefined &&
    (!Array.isArray(config.logics) || config.logics.some((l: unknown) => !isMachineLike(l)))
  ) {
    throw new ConfigError(
      "logics",
      "an array of XState machines (or agentLoop$(...) results) that a fresh app may resume by id.",
    );
  }
  const clock: unknown = config.clock;
  if (
    clock !== undefined &&
    (typeof clock !== "object" ||
      clock === null ||
      !("now" in clock) ||
      typeof clock.now !== "function" ||
      !("setTimer" in clock) ||
      typeof clock.setTimer !== "function")
  ) {
    throw new ConfigError(
      "clock",
      "a Clock: { now(): number; setTimer(fn, ms): cancel }, e.g. simulatedClock() in tests; omit it for the real clock.",
    );
  }
  const every = config.execution?.snapshotEvery;
  if (every !== undefined && every !== false && !(Number.isInteger(every) && every > 0)) {
    throw new ConfigError("execution.snapshotEvery", "a positive integer number of records, or false.");
  }
  const onClose: unknown = config.execution?.snapshotOnClose;
  if (onClose !== undefined && typeof onClose !== "boolean")
    throw new ConfigError(
      "execution.snapshotOnClose",
      "true (a snapshot at close for each live execution behind its last one) or false.",
    );
  const settledCache = config.execution?.settledCache;
  if (settledCache !== undefined && !(Number.isInteger(settledCache) && settledCache >= 0)) {
    throw new ConfigError(
      "execution.settledCache",
      `a non-negative integer number of ended executions whose outcome app.result keeps in memory; got ${String(settledCache)}.`,
    );
  }
  const children: unknown = config.execution?.children;
  if (children !== undefined) {
    const limits = typeof children === "object" && children !== null ? children : undefined;
    for (const key of ["maxDepth", "maxFanOut"] as const) {
      const value: unknown = limits && key in limits ? Reflect.get(limits, key) : undefined;
      if (!limits || (value !== undefined && !(Number.isInteger(value) && Number(value) >= 1)))
        throw new ConfigError(`execution.children.${key}`, `a positive integer; got ${String(value ?? children)}.`);
    }
  }
  const middleware = config.execution?.effectMiddleware;
  if (middleware !== undefined && (!Array.isArray(middleware) || middleware.some((m) => typeof m !== "function"))) {
    throw new ConfigError("execution.effectMiddleware", "an array of (ctx, input, next) => Promise<output> functions.");
  }
  const redact = config.security?.redact;
  if (
    redact !== undefined &&
    typeof redact !== "function" &&
    !(Array.isArray(redact) && redact.every((r) => r instanceof RegExp || typeof r === "string"))
  ) {
    throw new ConfigError("security.redact", "an array of RegExp or strings, or a function (text) => text.");
  }
  if (config.security?.crypto !== undefined && typeof config.security.crypto?.keys?.getOrCreate !== "function") {
    throw new ConfigError("security.crypto.keys", "a KeyStore, e.g. stores.keys.");
  }
  validateRetention(config.retention);
  const erase = config.compliance?.erase;
  if (erase !== undefined && typeof erase !== "boolean") throw new ConfigError("compliance.erase", "true or false.");
  // ADR 0140 D8 (b): erasure reaches the claim-checked blobs, so their store must be able to delete them.
  const claimCheckStore = config.execution?.claimCheck?.store;
  if (erase === true && claimCheckStore && typeof claimCheckStore.delete !== "function") {
    throw new ConfigError(
      "compliance.erase",
      "with execution.claimCheck, erasure must delete the subject's offloaded blobs, but execution.claimCheck.store has no delete(). Use a content store that can delete (memory, fs, IndexedDB, or an EncryptingContentStore over one).",
    );
  }
  if (config.observability?.onWarn !== undefined && typeof config.observability.onWarn !== "function") {
    throw new ConfigError("observability.onWarn", "a function (warning) => void.");
  }
  validateCapabilities(config.capabilities, Object.keys(effects));
}

/** Longest data subject, in UTF-8 bytes: an id, not data. */
export const MAX_SUBJECT_BYTES = 256;

// In a /u pattern a surrogate pair is one code point, so this matches lone surrogates only.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Refuses anything but a data subject id, a non-empty, well-formed (no lone surrogate) string of at most
 * MAX_SUBJECT_BYTES UTF-8 bytes, with ConfigError naming `path` (`start.subject`, `eraseSubject.subject`, ...)
 * and the value, before anything is written. Well-formed, because a UTF-8 store (a file, PostgreSQL text,
 * a URI-encoded coordinator id) would write two different lone surrogates as the same U+FFFD, or refuse them.
 */
export function checkSubject(subject: unknown, path: string): asserts subject is string {
  if (
    typeof subject === "string" &&
    subject !== "" &&
    !LONE_SURROGATE.test(subject) &&
    utf8Length(subject) <= MAX_SUBJECT_BYTES
  )
    return;
  const shown =
    typeof subject !== "string"
      ? showValue(subject)
      : subject === ""
        ? '""'
        : LONE_SURROGATE.test(subject)
          ? `${JSON.stringify(subject.slice(0, 24))}, which holds a lone surrogate (not well-formed Unicode)`
          : `a string of ${utf8Length(subject)} UTF-8 bytes (${JSON.stringify(subject.slice(0, 24))}...)`;
  throw new ConfigError(
    path,
    `a subject is a non-empty, well-formed string of at most ${MAX_SUBJECT_BYTES} UTF-8 bytes (the id of whose data it is, e.g. "user-42"); got ${shown}.`,
  );
}

function showValue(value: unknown): string {
  try {
    if (value === null || value === undefined) return String(value);
    const kind = Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`;
    return `${kind} ${JSON.stringify(value) ?? String(value)}`.slice(0, 80);
  } catch {
    return typeof value;
  }
}
