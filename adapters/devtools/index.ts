// loomwork/devtools: a picture of an app's machines with no network: the statechart, the current state, the
// journal as a timeline, time travel by seq, the tree of executions and the pending approvals.
export { buildModel, graphOfMachine, inferredMachine, timelineOf, statesOf, pendingOf, treeOf } from "./model.js";
export type { ModelInput, ReplayedState } from "./model.js";
export { loadModel, loadTree, machinesOf, readExecution, replayStates } from "./load.js";
export type { LoadModelOptions } from "./load.js";
export { activeNodeIds, stateAtSeq, valueText } from "./view.js";
export type {
  DevtoolsApproval,
  DevtoolsEntry,
  DevtoolsExecution,
  DevtoolsGraph,
  DevtoolsModel,
  DevtoolsState,
  DevtoolsStateNode,
  DevtoolsTransition,
} from "./view.js";
export { renderDevtools } from "./page.js";
export type { DevtoolsPage, DevtoolsPageOptions, DevtoolsSource } from "./page.js";
export { mountDevtools, storesSource } from "./mount.js";
export type { MountDevtoolsOptions } from "./mount.js";
export { layoutGraph } from "./layout.js";
export type { LayoutEngine, LayoutNode, LayoutEdge, Placed, PlacedState, PlacedTransition } from "./layout.js";
