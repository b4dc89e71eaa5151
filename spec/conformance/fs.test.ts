import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsStores, type FsStores } from "../../adapters/fs/index.js";
import type { Stores } from "../../stores/types.js";
import { describeStoresConformance } from "./suite.js";

const dirs = new WeakMap<Stores, string>();

async function openAt(dir: string): Promise<Stores> {
  const stores: FsStores = await fsStores({ dir });
  dirs.set(stores, dir);
  return stores;
}

describeStoresConformance("fsStores", {
  open: async () => openAt(await mkdtemp(join(tmpdir(), "loomwork-fs-conformance-"))),
  reopen: async (previous) => {
    await previous.events.close?.();
    return openAt(dirs.get(previous)!);
  },
  cleanup: async (stores) => {
    await stores.events.close?.();
    await rm(dirs.get(stores)!, { recursive: true, force: true });
  },
});
