// A live step's outcome as the record the execution journals: STEP_COMPLETED with its plain-JSON output
// (and the model usage the chain measured), or STEP_FAILED with the error and where the chain stopped it.
import { STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { failedFields, unwrapStepResult } from "../effects/trace.js";
import { NonJsonOutputError } from "../errors.js";
import type { RecordBody } from "../../stores/types.js";
import type { ExecutionHost, StepCall } from "./host.js";
import { plainJson } from "./json.js";

/** Runs the step through the host's step runner; never rejects: a thrown error is a STEP_FAILED record. */
export async function runStepToRecord(
  host: Pick<ExecutionHost, "runStep">,
  call: StepCall,
): Promise<RecordBody<typeof STEP_COMPLETED | typeof STEP_FAILED>> {
  const { stepId, effectId } = call.pending;
  try {
    const { output, usage } = unwrapStepResult(await host.runStep(call));
    return { type: STEP_COMPLETED, stepId, effectId, ...jsonOutput(stepId, output), ...(usage ? { usage } : {}) };
  } catch (error) {
    return { type: STEP_FAILED, stepId, effectId, ...failedFields(error) };
  }
}

/** A step's output as journaled: plain JSON, so the live run and every replay deliver the same value. */
function jsonOutput(stepId: string, output: unknown): { output?: unknown } {
  if (output === undefined) return {};
  return { output: plainJson(output, (reason) => new NonJsonOutputError(stepId, reason)) };
}
