// Appends to two executions forever and puts a snapshot every few appends (some at the head, some behind
// it, so their tail marks point at the end of the log or into it), printing "snap <execution> <seq>" once
// a snapshot resolved. The parent SIGKILLs it mid-stream, at any point of an append or a snapshot write.
import { fsStores } from "../../../adapters/fs/index.js";
import { started, step } from "../../conformance/suite.js";

const dir = process.argv[2]!;
const stores = await fsStores({ dir, checkpointEvery: 25 });

async function run(executionId: string): Promise<void> {
  await stores.events.append(executionId, 0, [started(1)]);
  for (let seq = 2; ; seq++) {
    const records = seq % 3 === 0 ? [step(seq, "y".repeat(seq % 300)), step(seq + 1)] : [step(seq, { n: seq })];
    await stores.events.append(executionId, seq - 1, records);
    if (records.length === 2) seq++;
    if (seq % 4 === 0) {
      const at = seq % 8 === 0 ? seq : seq - 2;
      await stores.events.putSnapshot(executionId, { seq: at, at: 0, state: { through: at } });
      process.stdout.write(`snap ${executionId} ${at}\n`);
    }
  }
}

await Promise.all(["p", "q"].map(run));
