// loomwork/read-models: the execution list with status, step and usage counters, on @xstate/store, kept live
// from an app's appends (`createReadModels(app)`). What loomwork/react and the bridge render; an app that
// never lists its executions does not bundle it (docs/adr/0011-entry-points-by-role.md).

export { createReadModels } from "./actors/journal/appReadModels.js";
export { createExecutionsStore } from "./actors/journal/readModels.js";
export type { ReadModels, ExecutionView, ExecutionsStore } from "./actors/journal/readModels.js";
export { approvalsInTree } from "./actors/agents/approvals.js";
export type { ApprovalPathStep, ApprovalSource, TreePendingApproval } from "./actors/agents/approvals.js";
