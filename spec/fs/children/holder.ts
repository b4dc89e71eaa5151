// Opens the stores on argv[2], appends argv[3] records to execution "held", prints "ready" and waits to be killed.
import { fsStores } from "../../../adapters/fs/index.js";
import { started, step } from "../../conformance/suite.js";

const [dir, count] = process.argv.slice(2) as [string, string];
const stores = await fsStores({ dir });
await stores.events.append("held", 0, [started(1)]);
for (let seq = 2; seq <= Number(count); seq++) await stores.events.append("held", seq - 1, [step(seq)]);
process.stdout.write("ready\n");
setInterval(() => undefined, 60_000);
