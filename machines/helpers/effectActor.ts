// Pure helpers a machine uses to name its effects. No I/O: the runtime supplies the effect.
import { fromPromise } from "xstate";
import { STEP_KEY as LOOM_STEP } from "./constants.js";

export { LOOM_STEP };

/** An invoke input that names its step explicitly: the runtime journals it as `<machineId>#<step>`. */
export interface StepInput<T> {
  [LOOM_STEP]: string;
  input: T;
}

/**
 * Names a step: use it as an invoke's or spawn's input when the default step id
 * (`<machineId>#<childId>:<occurrence>`) is not the name you want in the journal.
 *
 * @example
 * invoke: { src: "model", id: "model", input: ({ context }) => stepInput(`turn:${context.turn}:model`, context.request) }
 */
export function stepInput<T>(step: string, input: T): StepInput<T> {
  return { [LOOM_STEP]: step, input };
}

/**
 * A named step whose input is built only when it is read: the runtime reads it when the step runs (or is
 * persisted while it runs), so a replay that serves the step from the log never builds it. Built once,
 * then kept. `build` must be pure and read only what it captured (the context of the transition that
 * spawned the step), as an invoke's input function does.
 */
export function lazyStepInput<T>(step: string, build: () => T): StepInput<T> {
  let built: { value: T } | undefined;
  return {
    [LOOM_STEP]: step,
    get input(): T {
      built ??= { value: build() };
      return built.value;
    },
  };
}

export function isStepInput(value: unknown): value is StepInput<unknown> {
  return typeof value === "object" && value !== null && LOOM_STEP in value && typeof value[LOOM_STEP] === "string";
}

/**
 * A typed placeholder for an effect in `setup({ actors })`: it lets the machine invoke `src: "name"` with
 * typed input and output, and says plainly that the machine must run under loomwork, which supplies the effect.
 *
 * @example
 * setup({ actors: { search: effectActor<{ q: string }, Hit[]>() } })
 */
export function effectActor<TInput = unknown, TOutput = unknown>() {
  return fromPromise<TOutput, TInput | StepInput<TInput>>(async () => {
    throw new Error(
      "This effect is a placeholder: run the machine with loomwork's app.start(), which supplies the effect.",
    );
  });
}
