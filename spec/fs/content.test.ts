// The fs content and key stores: touch clock across reopens, conditional deletes, streaming lists, shredding.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fsStores } from "../../adapters/fs/index.js";
import { entryName } from "../../adapters/fs/directory.js";
import { encodeJsonFrame } from "../../adapters/fs/framing.js";
import { utf8 } from "../../stores/bytes.js";
import { SubjectErasedError } from "../../stores/errors.js";
import type { ContentInfo } from "../../stores/types.js";
import { removeTempDirs, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

async function listAll(list: AsyncIterable<ContentInfo>): Promise<ContentInfo[]> {
  const out: ContentInfo[] = [];
  for await (const info of list) out.push(info);
  return out;
}

describe("fs content store", () => {
  it("keeps the touch clock and touch times across a reopen", async () => {
    const dir = await tempDir("clock");
    const first = await fsStores({ dir });
    const old = await first.content.put(utf8("old"));
    const cutoff = await first.content.touchClock();
    await first.close();

    const second = await fsStores({ dir });
    const later = await second.content.touchClock();
    expect(later).toBeGreaterThan(cutoff);
    const fresh = await second.content.put(utf8("fresh"));
    await second.content.put(utf8("old")); // touching again spares it from a sweep with cutoff `later`
    const touched = new Map((await listAll(second.content.list())).map((i) => [i.address, i.touchedAt]));
    expect(touched.get(fresh)).toBeGreaterThanOrEqual(later);
    expect(touched.get(old)).toBeGreaterThanOrEqual(later);
    expect(await second.content.deleteIfUntouchedSince!(old, later)).toBe(false);
    expect(await second.content.deleteIfUntouchedSince!(old, await second.content.touchClock())).toBe(true);
    await second.close();
  });

  it("reads the persisted clock before its first write, not at open: a clock ahead of the wall still orders touches", async () => {
    const dir = await tempDir("clock-ahead");
    await (await fsStores({ dir })).close();
    // A clock persisted far ahead of the wall (a machine whose time went back), written while the directory is closed.
    const ahead = Math.floor(Date.now() / 1000) + 10_000;
    await writeFile(join(dir, "content", "clock"), encodeJsonFrame({ clock: ahead }));
    const stores = await fsStores({ dir });
    // The open probes nothing and writes nothing into tmp/: that waits for the first write.
    expect(await readdir(join(dir, "tmp"))).toEqual([]);
    const address = await stores.content.put(utf8("after the clock"));
    const [info] = await listAll(stores.content.list());
    expect(info).toMatchObject({ address, touchedAt: ahead });
    expect(await stores.content.touchClock()).toBe(ahead + 1);
    expect(await stores.content.deleteIfUntouchedSince!(address, ahead)).toBe(false);
    await stores.close();
  });

  it("never lets a conditional delete lose a concurrent put of the same bytes", async () => {
    const dir = await tempDir("race");
    const stores = await fsStores({ dir });
    const bytes = utf8("contended");
    for (let round = 0; round < 20; round++) {
      const address = await stores.content.put(bytes);
      const cutoff = await stores.content.touchClock();
      await Promise.all([stores.content.deleteIfUntouchedSince!(address, cutoff), stores.content.put(bytes)]);
      expect(await stores.content.has(address)).toBe(true);
    }
    await stores.close();
  });

  it("streams every blob from the fanned-out directories and ignores addresses that are not its own", async () => {
    const dir = await tempDir("list");
    const stores = await fsStores({ dir });
    const addresses = new Set<string>();
    for (let i = 0; i < 300; i++) addresses.add(await stores.content.put(utf8(`blob ${i}`)));
    const listed = await listAll(stores.content.list());
    expect(new Set(listed.map((i) => i.address))).toEqual(addresses);
    const [first] = addresses;
    const hex = first!.slice("sha256:".length);
    expect(await readdir(join(dir, "content", "blobs", hex.slice(0, 2), hex.slice(2, 4)))).toContain(hex);
    for (const bad of ["sha256:../../loomwork.lock", `hmac:${hex}`, `sha256:${hex.toUpperCase()}`, hex]) {
      expect(await stores.content.has(bad)).toBe(false);
      expect(await stores.content.get(bad)).toBeUndefined();
      expect(await stores.content.delete!(bad)).toBe(false);
    }
    await stores.close();
  });
});

describe("fs key store", () => {
  it("keeps keys and tombstones across a reopen, and leaves no key bytes of a destroyed subject", async () => {
    const dir = await tempDir("keys");
    const first = await fsStores({ dir });
    const alice = await first.keys.getOrCreate("alice");
    const gone = await first.keys.getOrCreate("gone");
    await first.keys.destroy("gone");
    await first.close();
    const files = await readdir(join(dir, "keys"));
    // `.created` records that a key was made (a later loss is KeyMissingError); `.erased` is the tombstone.
    expect(files.sort()).toEqual([
      `${entryName("alice")}.created`,
      `${entryName("alice")}.key`,
      `${entryName("gone")}.created`,
      `${entryName("gone")}.erased`,
    ]);
    for (const file of files)
      expect((await readFile(join(dir, "keys", file))).includes(Buffer.from(gone).toString("base64"))).toBe(false);

    const second = await fsStores({ dir });
    expect(await second.keys.get("alice")).toEqual(alice);
    expect(await second.keys.isDestroyed("gone")).toBe(true);
    expect(await second.keys.get("gone")).toBeUndefined();
    await expect(second.keys.getOrCreate("gone")).rejects.toBeInstanceOf(SubjectErasedError);
    await second.close();
  });

  it("finishes a destroy cut short between the tombstone and the shred", async () => {
    const dir = await tempDir("shred");
    const first = await fsStores({ dir });
    await first.keys.getOrCreate("bob");
    await first.close();
    // What a crash right after the tombstone leaves: both files.
    await writeFile(join(dir, "keys", `${entryName("bob")}.erased`), encodeJsonFrame({ subject: "bob" }));
    const second = await fsStores({ dir });
    expect((await readdir(join(dir, "keys"))).sort()).toEqual([
      `${entryName("bob")}.created`,
      `${entryName("bob")}.erased`,
    ]);
    expect(await second.keys.get("bob")).toBeUndefined();
    await expect(second.keys.getOrCreate("bob")).rejects.toBeInstanceOf(SubjectErasedError);
    await second.close();
  });
});
