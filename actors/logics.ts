// The logics an app knows, several versions per id (actors/journal/versions.ts), and the checks a start
// passes before anything is written: the machine, its effects, its id, subject and input. The refusals
// here need no store; what a resume judges from the journal (which version an execution started on) is
// `forExecution`.
import type { AnyStateMachine } from "xstate";
import { EXECUTION_STARTED } from "../stores/schema.js";
import type { ExecutionInfo } from "../stores/types.js";
import { checkSubject, type LoomConfig } from "./config.js";
import { ConfigError, UnknownEffectError } from "./errors.js";
import type { Journal } from "./journal/journal.js";
import { plainJson } from "./journal/json.js";
import { effectSourcesOf } from "./journal/machineInfo.js";
import { childMachinesOf, isMachineLogic, isSourceLogic, referencedLogic } from "./journal/children.js";
import { LogicVersions, type StartedLogic } from "./journal/versions.js";
import { INTERNAL_EFFECT_IDS, isInternalEffect, isInternalLogic } from "./lifecycle/host.js";
import { declarationOf } from "./logicDeclaration.js";

/** Options of `app.start`: the execution's id, its data subject and its input. */
export interface StartOptions {
  /** The new execution's id, unique in the stores: a start refuses an id that already has a log. */
  executionId: string;
  /** Whose personal data the execution holds (sealing, erasure, export). */
  subject?: string;
  /** The machine's `input`; journaled, so it must be plain JSON. */
  input?: unknown;
}

export class AppLogics {
  /** Every definition held, several versions per id. */
  readonly versions = new LogicVersions();
  private readonly effectsChecked = new WeakSet<AnyStateMachine>(); // logics whose invoked effects checkEffects found registered
  private readonly internalMachines = new WeakSet<AnyStateMachine>(); // the runtime's own machines, once registered

  /** `requireMaintenance(id)`: throws unless loomwork/lifecycle handed the app the runtime's own machines. */
  constructor(
    private readonly config: LoomConfig,
    private readonly journal: Journal,
    private readonly requireMaintenance: (id: string) => void,
  ) {
    for (const logic of config.logics ?? []) {
      // A logic the app may resume must find its effects: refused here, at boot, not at the resume.
      const known = Object.keys(config.effects);
      const missing = missingSources(logic, known).filter((src) => !isInternalEffect(src));
      if (missing.length)
        throw new ConfigError(
          "effects",
          `logic "${logic.id}" (in logics) invokes ${missing.map((m) => `"${m}"`).join(", ")}, which effects does not register.`,
        );
    }
    this.versions.registerAll(config.logics ?? []);
    for (const logic of config.logics ?? []) this.versions.registerAll(childMachinesOf(logic));
  }

  /** Holds `logic`, and the machines it may start as child executions (a resume finds them by logic id). */
  register(logic: AnyStateMachine): void {
    this.versions.register(logic);
    for (const child of childMachinesOf(logic)) this.versions.register(child);
  }

  /** The runtime's own machines (sweep, erase coordinator): registered by the first lifecycle function called on the app (loomwork/lifecycle), so it resumes or starts them by id. */
  registerInternal(logics: readonly AnyStateMachine[]): void {
    this.versions.registerAll(logics);
    for (const logic of logics) this.internalMachines.add(logic);
  }

  /** The newest held definition of `logicId` (what a start by id runs, and what the lifecycle modules use). */
  logicOf(logicId: string | undefined): AnyStateMachine | undefined {
    return this.versions.newest(logicId);
  }

  /** The logic `app.start` runs: the one given, or the newest held version of a logic id. */
  startLogic(logicOrId: AnyStateMachine | string): AnyStateMachine {
    if (typeof logicOrId !== "string") return logicOrId;
    if (isInternalLogic(logicOrId)) this.requireMaintenance(logicOrId);
    const logic = this.versions.newest(logicOrId);
    if (!logic)
      throw new ConfigError(
        "start.logic",
        `no logic "${logicOrId}" is listed in defineConfig({ logics: [...] }): list it, or pass the machine itself.`,
      );
    return logic;
  }

  /**
   * The refusals of `app.start` that need no store, before anything is written: the id, the subject, the
   * logic's effects, and an input that is not plain JSON or not one the logic declares it takes. Returns the input as journaled.
   */
  checkStart(logic: AnyStateMachine, options: StartOptions, runsHere = true): unknown {
    if (typeof options?.executionId !== "string" || options.executionId === "") {
      throw new ConfigError("start.executionId", "a non-empty string naming the execution.");
    }
    if (options.subject !== undefined) checkSubject(options.subject, "start.subject");
    this.checkEffects(logic, runsHere);
    const input = plainJson(
      options.input,
      (reason) =>
        new ConfigError(
          "start.input",
          `the input of "${options.executionId}" must be plain JSON to be journaled, but holds ${reason}.`,
        ),
      "input",
    );
    declarationOf(logic)?.checkInput?.(input, options.executionId);
    return input;
  }

  /** Refuses what is not a machine, and (unless it runs elsewhere: app.submit) one invoking an effect this app does not register. */
  checkEffects(logic: AnyStateMachine, runsHere = true): void {
    // The caller's value is untrusted (plain JavaScript may pass anything): checked as unknown.
    const value: unknown = logic;
    if (
      !value ||
      (typeof value !== "object" && typeof value !== "function") ||
      !("transition" in value) ||
      typeof value.transition !== "function" ||
      !("root" in value)
    ) {
      throw new ConfigError("start.logic", "an XState machine (setup(...).createMachine(...)) or agentLoop$(config).");
    }
    // A definition is immutable and the effects are the config's: one that passed is not walked again at every start.
    if (!runsHere || this.effectsChecked.has(logic)) return;
    const internal = this.internalMachines.has(logic) ? INTERNAL_EFFECT_IDS : [];
    const known = [...Object.keys(this.config.effects), ...internal]; // only the runtime's own machines may invoke its internal effects
    const missing = missingSources(logic, known);
    if (missing.length > 0) throw new UnknownEffectError(logic.id, missing, known);
    this.effectsChecked.add(logic);
  }

  /**
   * The definition a journaled execution runs on (the version it started on, or `logic`), checked and
   * registered, with what its start journaled of it. Judged before any record is replayed: a pinned
   * execution whose version is not held is refused here.
   */
  async forExecution(
    info: ExecutionInfo,
    logic?: AnyStateMachine,
  ): Promise<{ machine: AnyStateMachine; started: StartedLogic | undefined }> {
    const { executionId } = info;
    const started = await this.startedLogic(info);
    if (isInternalLogic(started?.logicId)) this.requireMaintenance(executionId);
    const machine = started ? await this.versions.resolve(executionId, started, logic) : logic;
    if (!machine) {
      throw new ConfigError(
        "logics",
        `execution "${executionId}" runs logic "${info.logicId}", which this app does not know: pass it to app.resume(id, logic) or list it in defineConfig({ logics: [...] }).`,
      );
    }
    this.checkEffects(machine);
    this.register(machine);
    return { machine, started };
  }

  // What EXECUTION_STARTED says of the logic: from the catalogue, or (an entry an older release folded, without
  // the hash) from the record itself; undefined for a log whose first record is not a start.
  private async startedLogic(info: ExecutionInfo): Promise<StartedLogic | undefined> {
    if (info.logicId !== undefined && info.machineHash !== undefined) {
      return {
        logicId: info.logicId,
        machineHash: info.machineHash,
        ...(info.version === undefined ? {} : { version: info.version }),
      };
    }
    const [first] = await this.journal.readForReplay(info.executionId, 1);
    if (first?.type !== EXECUTION_STARTED) return info.logicId === undefined ? undefined : { logicId: info.logicId };
    return {
      logicId: first.logicId,
      machineHash: first.machineHash,
      ...(typeof first.version === "string" ? { version: first.version } : {}),
    };
  }
}

/**
 * The sources `logic` invokes that are neither a registered effect nor a state machine (a child execution), in it and
 * in every machine it may start, each named as the user wrote it (an inline actor by the state that invokes it): an
 * effect's name is the app's, whichever machine of the tree invokes it.
 */
function missingSources(logic: AnyStateMachine, known: readonly string[]): string[] {
  const missing: string[] = [];
  for (const src of requiredEffects(logic)) {
    if (known.includes(src)) continue;
    const inline = /^xstate\.invoke\.(\d+)\.(.*)$/.exec(src);
    const name = inline ? `the inline actor invoked in state "${inline[2]}"` : src;
    if (!missing.includes(name)) missing.push(name);
  }
  return missing;
}

/**
 * The sources of a machine and of every machine it runs as a child execution that must be registered effects: a
 * promise actor (journaled); not a machine (a child execution) nor a callback or observable actor (a live source).
 */
export function requiredEffects(logic: AnyStateMachine): string[] {
  const required = new Set<string>();
  for (const machine of [logic, ...childMachinesOf(logic)])
    for (const src of effectSourcesOf(machine)) {
      const named = referencedLogic(machine, src);
      if (!isMachineLogic(named) && !isSourceLogic(named)) required.add(src);
    }
  return [...required];
}
