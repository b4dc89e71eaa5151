// The agent, claim-check, sweep and erasure suites on fsStores, each test in a fresh directory.
import { fsHarness } from "../support/adapterHarness.js";
import { describeAdapterSuites } from "./suites.js";

describeAdapterSuites("fsStores", fsHarness());
