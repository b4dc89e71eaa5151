// The agent, claim-check, sweep, erasure and children suites, each parameterised over an adapter: every adapter's
// test file in this directory calls describeAdapterSuites with its harness, after describeStoresConformance.
import type { AdapterHarness } from "../support/adapterHarness.js";
import { describeAgentSuite } from "./agentSuite.js";
import { describeChildrenSuite } from "./childrenSuite.js";
import { describeClaimCheckSuite } from "./claimCheckSuite.js";
import { describeErasureSuite } from "./erasureSuite.js";
import { describeSweepSuite } from "./sweepSuite.js";

export function describeAdapterSuites(name: string, harness: AdapterHarness): void {
  describeAgentSuite(name, harness);
  describeClaimCheckSuite(name, harness);
  describeSweepSuite(name, harness);
  describeErasureSuite(name, harness);
  describeChildrenSuite(name, harness);
}
