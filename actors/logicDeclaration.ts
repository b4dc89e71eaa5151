// What a machine declares for the runtime that runs it, beside its definition: the runtime asks every logic
// the same questions and special-cases none (agentLoop$ declares its input check, its warnings and the role
// of its old tool frames here). Kept off the definition, so declaring changes no definition hash.
import type { AnyMachineSnapshot, AnyStateMachine } from "xstate";
import type { TaskKind } from "../machines/helpers/invokeAs.js";
import type { WarningSink } from "./warnings.js";

/** One run of an execution as a declaration's `afterMacrostep` sees it: its id and the warning codes it already gave. */
export interface DeclaredRun {
  executionId: string;
  warned: Set<string>;
}

/** What a logic declares; every part is optional. */
export interface LogicDeclaration {
  /** Refuses (ConfigError "start.input") an input the logic cannot take, before app.start writes anything. */
  checkInput?(input: unknown, executionId: string): void;
  /**
   * Called after every macrostep, live or replayed: report-only, nothing journaled. `warn` is the app's one
   * warning sink (./warnings.ts); the route names the logic's own listeners.
   */
  afterMacrostep?(snapshot: AnyMachineSnapshot, run: DeclaredRun, warn: WarningSink): void;
  /**
   * The role of a pending step whose persisted state carries none: a step the logic invoked before it declared
   * roles with `invokeAs` (a state journaled by an older release). Steps that declare a role never ask.
   */
  roleOfUndeclaredStep?(stepId: string): TaskKind | undefined;
}

const declarations = new WeakMap<AnyStateMachine, LogicDeclaration>();

/** Declares what the runtime needs to know of `machine` (once, where the machine is built). */
export function declareLogic(machine: AnyStateMachine, declaration: LogicDeclaration): void {
  declarations.set(machine, declaration);
}

/** What `machine` declared, or undefined for a machine that declared nothing. */
export function declarationOf(machine: AnyStateMachine): LogicDeclaration | undefined {
  return declarations.get(machine);
}
