// Appends to one execution forever and, as the runtime does, puts a snapshot every few appends without
// awaiting it before the next append: snapshot files are written while appends go on. Prints
// "ack <seq>" once an append resolved and "snap <seq>" once a snapshot resolved. The parent SIGKILLs it
// at any point of an append or of a snapshot write.
import { fsStores } from "../../../adapters/fs/index.js";
import { started, step } from "../../conformance/suite.js";

const dir = process.argv[2]!;
const stores = await fsStores({ dir, checkpointEvery: 40 });
await stores.events.append("o", 0, [started(1)]);
process.stdout.write("ack 1\n");
for (let seq = 2; ; seq++) {
  await stores.events.append("o", seq - 1, [step(seq, { n: seq, pad: "w".repeat(seq % 500) })]);
  process.stdout.write(`ack ${seq}\n`);
  if (seq % 3 === 0) {
    const at = seq;
    // A state large enough that its write takes a while.
    void stores.events
      .putSnapshot("o", { seq: at, at: 0, state: { through: at, pad: "s".repeat(20_000 + (at % 7) * 3_000) } })
      .then(() => process.stdout.write(`snap ${at}\n`));
  }
}
