// Version identity (docs/upgrades.md): which definition of a logic an execution runs. A logic's version is
// the one it declares (XState's `createMachine({ version })`, `meta: { version }`, agentLoop$'s `version`);
// one that declares none is identified by its definition hash. An app may hold several versions of one
// logic id; the execution journals its logic id, hash and declared version in EXECUTION_STARTED, and:
// - pinned (a declared version): it resumes on exactly that version, or is refused before any replay;
// - unpinned (none declared, or a log from before versions): it resumes on the held definition with its
//   hash, else on its logic id's newest definition (what `patched` and `checkReplay(app, logic)` are for).
import type { AnyStateMachine } from "xstate";
import { sha256Hex, utf8 } from "../../stores/bytes.js";
import { ConfigError, UnknownLogicVersionError } from "../errors.js";

/** What an execution's EXECUTION_STARTED says of its logic. */
export interface StartedLogic {
  logicId: string;
  machineHash?: string;
  version?: string;
}

const hashes = new WeakMap<AnyStateMachine, Promise<string>>();

/** The definition hash of a machine (its JSON definition's SHA-256, 16 hex digits): its version when it declares none. */
export function machineHashOf(machine: AnyStateMachine): Promise<string> {
  let hash = hashes.get(machine);
  if (!hash) {
    hash = sha256Hex(utf8(JSON.stringify(machine.definition))).then((hex) => hex.slice(0, 16));
    hashes.set(machine, hash);
  }
  return hash;
}

/** The version a machine declares: XState's `version`, else a string `meta.version` on its root; undefined for none. */
export function declaredVersionOf(machine: AnyStateMachine): string | undefined {
  if (typeof machine.version === "string") return machine.version;
  const meta: unknown = machine.config.meta;
  const version = typeof meta === "object" && meta !== null && "version" in meta ? meta.version : undefined;
  return typeof version === "string" ? version : undefined;
}

/** How a version is shown: the declared one, or `#<hash>` for a definition that declares none. */
async function shownVersion(machine: AnyStateMachine): Promise<string> {
  return declaredVersionOf(machine) ?? `#${await machineHashOf(machine)}`;
}

/** The logics an app holds, several versions per logic id, oldest first (the order of `defineConfig({ logics })`). */
export class LogicVersions {
  private readonly byId = new Map<string, AnyStateMachine[]>();

  /**
   * Holds `logic`. A definition already held is left where it is; another one of the same id and declared
   * version replaces it in place (the newest object wins, its rank stays); anything else becomes the newest.
   */
  register(logic: AnyStateMachine): void {
    const held = this.byId.get(logic.id) ?? [];
    if (held.includes(logic)) return;
    const version = declaredVersionOf(logic);
    const same = version === undefined ? -1 : held.findIndex((m) => declaredVersionOf(m) === version);
    if (same >= 0) held[same] = logic;
    else held.push(logic);
    this.byId.set(logic.id, held);
  }

  /** Holds each of `logics` (the config's), refusing two different definitions of one id and declared version. */
  registerAll(logics: readonly AnyStateMachine[]): void {
    const seen = new Map<string, AnyStateMachine>();
    for (const logic of logics) {
      const version = declaredVersionOf(logic);
      const key = `${logic.id}\u0000${version}`;
      const other = seen.get(key);
      if (version !== undefined && other && other !== logic) {
        throw new ConfigError(
          "logics",
          `two definitions of logic "${logic.id}" declare version "${version}": give the newer one a new version.`,
        );
      }
      seen.set(key, logic);
      this.register(logic);
    }
  }

  /** The newest definition of `logicId` (the last listed), or undefined. */
  newest(logicId: string | undefined): AnyStateMachine | undefined {
    return logicId === undefined ? undefined : this.byId.get(logicId)?.at(-1);
  }

  /** The versions held of `logicId`, as shown in errors and reports (`#<hash>` for an undeclared one). */
  versionsOf(logicId: string): Promise<string[]> {
    return Promise.all((this.byId.get(logicId) ?? []).map(shownVersion));
  }

  /**
   * The definition `executionId` resumes on (see the file's head), or undefined when no version of its
   * logic id is held. `passed` (app.resume's argument) replaces the held ones, and is checked like them.
   * Throws UnknownLogicVersionError for a pinned execution whose version is not held.
   */
  async resolve(
    executionId: string,
    started: StartedLogic,
    passed?: AnyStateMachine,
  ): Promise<AnyStateMachine | undefined> {
    const candidates = passed ? [passed] : (this.byId.get(started.logicId) ?? []);
    if (candidates.length === 0) return undefined;
    if (started.version !== undefined) {
      const pinned = candidates.find((m) => declaredVersionOf(m) === started.version);
      if (pinned) return pinned;
      throw new UnknownLogicVersionError(
        executionId,
        started.logicId,
        started.version,
        await Promise.all(candidates.map(shownVersion)),
      );
    }
    if (started.machineHash !== undefined && candidates.length > 1) {
      for (const machine of candidates) if ((await machineHashOf(machine)) === started.machineHash) return machine;
    }
    return candidates.at(-1);
  }
}

// The declared version an execution journals beside the hash (none: the execution is pinned to no version).
export function versionOption(machine: AnyStateMachine): { version?: string } {
  const version = declaredVersionOf(machine);
  return version === undefined ? {} : { version };
}
