// Opens the stores on argv[2] (a directory closed cleanly, execution "e" in it), continues "e" from its head,
// forever, printing "ack e <seq>" once each append resolved. The parent SIGKILLs it mid-stream.
import { fsStores } from "../../../adapters/fs/index.js";
import { step } from "../../conformance/suite.js";

const dir = process.argv[2]!;
const stores = await fsStores({ dir });
for (let seq = (await stores.events.head("e")) + 1; ; seq++) {
  await stores.events.append("e", seq - 1, [step(seq, { n: seq })]);
  process.stdout.write(`ack e ${seq}\n`);
}
