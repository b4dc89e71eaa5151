import { memoryStores } from "../../stores/memory.js";
import { describeStoresConformance } from "./suite.js";

describeStoresConformance("memoryStores", { open: async () => memoryStores() });
