// The fs adapter against the shared conformance suite, then the agent, claim-check, sweep and erasure
// suites: every open is a fresh temporary directory, a reopen closes the writer and opens the directory
// again (spec/support/adapterHarness.ts).
import { fsHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./adapterSuites.js";
import { describeStoresConformance } from "./suite.js";

describeStoresConformance("fsStores", fsHarness());
describeAdapterSuites("fsStores", fsHarness());
