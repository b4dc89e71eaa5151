// The older version of the fs adapter (spec/fixtures/older-fs: commit 8a1d46e, before ADR 0008) on a directory.
// `list` prints its catalogue and closes. `create <id> <n>` writes execution <id> with n records and closes.
// `append <id> <n>` appends n records to <id>, prints the catalogue and "appended", then waits to be SIGKILLed
// (no close: a crash of the older writer). Plain records: this process runs no code of this version.
import { fsStores } from "../../fixtures/older-fs/fsStores-8a1d46e.mjs";

const [dir, command, executionId, count] = process.argv.slice(2) as [
  string,
  "list" | "create" | "append",
  string?,
  string?,
];
const record = (seq: number) =>
  seq === 1
    ? { seq, at: 2_000, type: "loom.execution.started", logicId: "older", machineHash: "h", input: {}, schema: 1 }
    : {
        seq,
        at: 2_000 + seq,
        type: "loom.step.completed",
        stepId: `older#s:${seq}`,
        effectId: "tool",
        output: { older: seq },
      };

const stores = await fsStores({ dir });
if (command !== "list") {
  let head =
    command === "create" ? 0 : (await stores.events.listExecutions()).find((e) => e.executionId === executionId)!.head;
  for (let i = 0; i < Number(count); i++, head++) await stores.events.append(executionId!, head, [record(head + 1)]);
}
process.stdout.write(
  `${JSON.stringify((await stores.events.listExecutions()).map((e) => [e.executionId, e.head, e.status]))}\n`,
);
if (command === "append") {
  process.stdout.write("appended\n");
  setInterval(() => {}, 1_000);
} else {
  await stores.close();
}
