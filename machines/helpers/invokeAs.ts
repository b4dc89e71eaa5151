// How a machine says in what role it invokes an effect (EffectContext.taskKind, ADR 0140 D9). Pure.
import { TASK_KIND_KEY as LOOM_TASK_KIND } from "./constants.js";
import { stepInput, type StepInput } from "./effectActor.js";

export { LOOM_TASK_KIND };

/** The role an effect is invoked in: a model call, a tool frame, or another task. */
export type TaskKind = "llm" | "tool" | "task";

export type TaskStepInput<T> = StepInput<T> & { [LOOM_TASK_KIND]: TaskKind };

/**
 * Names a step and the role it is invoked in. The runtime sets `ctx.taskKind` from it (without it,
 * `taskKind` is the registered effect's kind). The agent loop invokes each tool call this way, so a
 * middleware can tell an agent tool frame from a flow step that happens to call the same effect.
 *
 * @example
 * invoke: { src: call.toolName, id: "tool", input: ({ context }) => invokeAs("tool", `turn:${context.turn}:tool:0`, call.input) }
 */
export function invokeAs<T>(taskKind: TaskKind, step: string, input: T): TaskStepInput<T> {
  return { ...stepInput(step, input), [LOOM_TASK_KIND]: taskKind };
}

/** The role recorded by `invokeAs`, if any. */
export function taskKindOf(value: unknown): TaskKind | undefined {
  return typeof value === "object" && value !== null && LOOM_TASK_KIND in value
    ? asTaskKind(value[LOOM_TASK_KIND])
    : undefined;
}

function asTaskKind(kind: unknown): TaskKind | undefined {
  return kind === "llm" || kind === "tool" || kind === "task" ? kind : undefined;
}

/**
 * The role a step was declared in (`invokeAs`; agentLoop$ declares every tool call "tool"), or undefined for a
 * plain invoke: the EffectContext's `invokedAs`, where the runtime puts it.
 */
export function invokedAs(ctx: { invokedAs?: TaskKind }): TaskKind | undefined {
  return asTaskKind(ctx.invokedAs);
}
