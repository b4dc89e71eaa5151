// The agent, claim-check, sweep and erasure suites on memory stores.
import { memoryHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./suites.js";

describeAdapterSuites("memoryStores", memoryHarness());
