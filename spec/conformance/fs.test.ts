// The fs adapter against the shared conformance suite: every open is a fresh temporary directory,
// a reopen closes the writer and opens the directory again (spec/support/adapterHarness.ts).
import { fsHarness } from "../support/adapterHarness.js";
import { describeStoresConformance } from "./suite.js";

describeStoresConformance("fsStores", fsHarness());
