// Appends to three executions concurrently, forever, printing "ack <execution> <seq>" once each append resolved.
// The parent SIGKILLs it mid-stream and checks that every acknowledged record survived.
import { fsStores } from "../../../adapters/fs/index.js";
import { started, step } from "../../conformance/suite.js";

const dir = process.argv[2]!;
const stores = await fsStores({ dir, checkpointEvery: 40 });

async function run(executionId: string): Promise<void> {
  await stores.events.append(executionId, 0, [started(1)]);
  process.stdout.write(`ack ${executionId} 1\n`);
  for (let seq = 2; ; seq++) {
    const records = seq % 5 === 0 ? [step(seq, "x".repeat(seq % 700)), step(seq + 1)] : [step(seq, { n: seq })];
    await stores.events.append(executionId, seq - 1, records);
    if (records.length === 2) seq++;
    process.stdout.write(`ack ${executionId} ${seq}\n`);
  }
}

await Promise.all(["a", "b", "c"].map(run));
