// The sweep and the erase coordinator on an fs journal, in a fresh process whose heap the parent caps
// (--max-old-space-size): finishing at all shows they stream rather than load the journal. fsyncs are
// counted through the adapter's fsOps seam.
import { fsStores } from "../../adapters/fs/index.js";
import { nodeFsOps } from "../../adapters/fs/fsOps.js";
import { runMaintenance } from "../maintenance.js";
import { report } from "../spawn.js";

const { dir, executions } = JSON.parse(process.argv[2]!) as { dir: string; executions: number };
let fsyncs = 0;
const stores = await fsStores({
  dir,
  fsOps: {
    fsync: (handle, path) => (fsyncs++, nodeFsOps.fsync(handle, path)),
    fsyncDir: (path) => (fsyncs++, nodeFsOps.fsyncDir(path)),
  },
});
const maintenance = await runMaintenance(stores, executions, () => fsyncs);
await stores.close();
report({ ms: maintenance.sweep?.ms ?? 0, maintenance });
