// Memory stores against the shared conformance suite, then the agent, claim-check, sweep and erasure suites.
import { memoryStores } from "../../stores/memory.js";
import { memoryHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./adapterSuites.js";
import { describeStoresConformance } from "./suite.js";

describeStoresConformance("memoryStores", { open: async () => memoryStores() });
describeAdapterSuites("memoryStores", memoryHarness());
