// The 10-step workflow of the fleet benchmark as DBOS Transact runs it: a workflow calling ten registered
// steps in sequence, each returning the same small object as the fleet's task effect (bench/fleetFlow.ts).
// DBOS is a devDependency used only by the benchmark.
import { DBOS } from "@dbos-inc/dbos-sdk";
import { FLOW_STEPS } from "./fleetFlow.js";

/** The names the submitting client enqueues by. */
export const DBOS_APP = "loomwork-bench";
export const DBOS_QUEUE = "bench";
export const DBOS_WORKFLOW = "tenStepFlow";

/** Registers the step and the workflow (before `DBOS.launch`); returns the workflow function. */
export function registerDbosFlow(): () => Promise<{ steps: number }> {
  const step = DBOS.registerStep(async (i: number) => ({ i, ok: true }), { name: "step" });
  return DBOS.registerWorkflow(
    async () => {
      for (let i = 0; i < FLOW_STEPS; i++) await step(i);
      return { steps: FLOW_STEPS };
    },
    { name: DBOS_WORKFLOW },
  );
}
