// Story: two subjects' agents on one journal; an Art. 15/20 export of one written to a JSON file, then
// its erasure (crypto-shredding plus deletion of its claim-checked blobs), and the proof: no byte of the
// erased subject's data is readable anywhere in the journal, while the other subject's runs are intact.
//
//   npx tsx stories/erase-and-export.ts      (LOOMWORK_DIR: a new or empty directory, or one this story made;
//                                             else a fresh temporary directory. A non-empty directory the story
//                                             did not create is refused untouched: it may hold a user's journal.)
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, sep } from "node:path";
import {
  agentLoop$,
  createApp,
  createLlmEffect,
  createToolEffect,
  defineConfig,
  EncryptingContentStore,
  scriptedModel,
  SubjectErasedError,
} from "../index.js";
import { fsStores } from "../adapters/fs/index.js";
import { exitOnRefusal, freshStoryDir, ownedStoryDir } from "./support/storyDir.js";
import { eraseSubject, exportSubject } from "../lifecycle.js";

const given = process.env.LOOMWORK_DIR;
const dir = await (given ? ownedStoryDir(given, "erase-and-export") : freshStoryDir("erase-and-export")).catch(
  exitOnRefusal,
);
// The export is the copy the subject asked for: kept apart from the journal the proof scans.
const exportDir = join(dir, "export");
const tty = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = (text: string) => (tty ? `\x1b[1m${text}\x1b[22m` : text);
const line = (text = "") => console.log(text);

/** Each subject's CRM record: a canary string that must be unreadable after the erasure. */
const people: Record<string, { name: string; canary: string }> = {
  "user-alice": { name: "Alice Liddell", canary: "CANARY-alice-7f3a91" },
  "user-bob": { name: "Bob Hope", canary: "CANARY-bob-2c8e44" },
};

const stores = await fsStores({ dir });
const content = new EncryptingContentStore(stores.content, stores.keys);
const loop = agentLoop$({
  id: "support",
  model: "model",
  tools: ["crmLookup", "orderHistory"],
  warnTranscriptBytes: false,
});
const app = createApp(
  defineConfig({
    stores: { ...stores, content },
    effects: {
      model: createLlmEffect(
        scriptedModel((_r, call) =>
          call === 0
            ? {
                toolCalls: [
                  { toolName: "crmLookup", input: {} },
                  { toolName: "orderHistory", input: {} },
                ],
              }
            : { text: "Your last order shipped on Monday." },
        ),
      ),
      crmLookup: createToolEffect(async (_input: unknown, ctx) => ({
        ...people[ctx.subject!],
        email: `${ctx.subject}@example.org`,
      })),
      // A bulk history the model only needs a digest of: claim-checked, sealed under the subject's key.
      orderHistory: createToolEffect(async (_input: unknown, ctx) => ({
        owner: people[ctx.subject!]!.canary,
        orders: Array.from({ length: 40 }, (_, i) => ({
          id: `${ctx.subject}-o${i}`,
          item: `item ${i}`,
          total: 10 + i,
        })),
      })),
    },
    execution: {
      claimCheck: {
        store: content,
        toolIds: ["orderHistory"],
        digests: { orderHistory: (v: unknown) => ({ orders: (v as { orders: unknown[] }).orders.length }) },
      },
    },
    security: { crypto: { keys: stores.keys } },
    compliance: { erase: true },
    logics: [loop],
  }),
);

line(bold("loomwork story: erase-and-export (per-subject sealing, Art. 15/20 export, Art. 17 erasure)"));
for (const subject of Object.keys(people)) {
  await app.start(loop, { executionId: `chat-${subject}`, subject, input: { prompt: "Where is my order?" } });
  await app.result(`chat-${subject}`);
}
line(`  two support chats journaled in ${dir}, each sealed under its subject's key`);

const exported = await exportSubject(app, "user-alice");
const exportFile = join(exportDir, "export-user-alice.json");
await mkdir(exportDir, { recursive: true });
await writeFile(exportFile, JSON.stringify(exported, null, 2) + "\n");
const exportText = JSON.stringify(exported);
line(
  `  export of user-alice: ${exported.executions.length} execution, ${exported.claimChecked.length} claim-checked blob(s) resolved -> ${exportFile}`,
);
line(
  `    contains her data: ${exportText.includes(people["user-alice"]!.canary) && exportText.includes("Alice Liddell") ? "yes" : "NO"}`,
);

const erased = await eraseSubject(app, "user-alice");
line(
  `  erase user-alice: key shredded ${erased.shredded ? "yes" : "no"}; blobs deleted ${erased.contentDeleted.deleted}, retained ${erased.contentDeleted.retained}`,
);

let unreadable = false;
try {
  await app.log("chat-user-alice");
} catch (error) {
  unreadable = error instanceof SubjectErasedError;
}
line(`    her records: ${unreadable ? "unreadable (crypto-shredded)" : "STILL READABLE"}`);
const canaryHits = (await grep(dir, [people["user-alice"]!.canary, "Alice Liddell"])).filter(
  (path) => !path.startsWith(`${exportDir}${sep}`),
);
line(
  `    her canary on disk: ${canaryHits.length === 0 ? "found in no file of the journal" : `FOUND in ${canaryHits.join(", ")}`} (the export above aside)`,
);
const again = await eraseSubject(app, "user-alice");
line(`    a second erase: ${again.alreadyErased ? "a no-op" : "did work again"}`);

const bob = await exportSubject(app, "user-bob");
const bobIntact =
  JSON.stringify(bob).includes(people["user-bob"]!.canary) && (await app.log("chat-user-bob")).length > 0;
line(`  user-bob intact: ${bobIntact ? "yes, his log and blobs still open" : "NO"}`);
await app.close();
await stores.events.close?.();
if (!unreadable || canaryHits.length > 0 || !bobIntact || !again.alreadyErased) process.exitCode = 1;

/** Every file under `root` that contains one of `needles` as bytes (UTF-8). */
async function grep(root: string, needles: string[]): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = await readFile(path);
    if (needles.some((needle) => bytes.includes(Buffer.from(needle)))) hits.push(path);
  }
  return hits;
}
