// The XState conformance corpus: machines vendored from XState v5's own examples/ and packages/core/test/,
// each file naming its source paths and commit (CORPUS_COMMIT). The harness runs them: spec/xstate/harness.ts.
import type { CorpusMachine } from "../corpusTypes.js";
import { corpus as workflowBasics } from "./workflowBasics.js";
import { corpus as workflowEvents } from "./workflowEvents.js";
import { corpus as coreInvoke } from "./coreInvoke.js";
import { corpus as coreActions } from "./coreActions.js";
import { corpus as exampleApps } from "./exampleApps.js";

export const CORPUS: readonly CorpusMachine[] = [
  ...workflowBasics,
  ...workflowEvents,
  ...coreInvoke,
  ...coreActions,
  ...exampleApps,
];
