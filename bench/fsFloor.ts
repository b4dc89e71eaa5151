// The floor of a resume from fs: read the journal's files (the catalogue checkpoint, every execution's log and
// snapshot) and JSON.parse every frame's payload. Nothing else.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Reads and parses every frame under `dir`; returns what it read. */
export async function readFsFloor(dir: string): Promise<{ files: number; frames: number; bytes: number }> {
  const files = [join(dir, "catalogue.ckpt")];
  for (const name of await readdir(join(dir, "executions"))) {
    for (const file of await readdir(join(dir, "executions", name))) files.push(join(dir, "executions", name, file));
  }
  let frames = 0;
  let bytes = 0;
  for (const file of files) {
    const buffer = await readFile(file);
    bytes += buffer.length;
    // A frame is [u32 length][u32 crc][payload]; the floor skips the checksum.
    for (let offset = 0; offset + 8 <= buffer.length;) {
      const length = buffer.readUInt32LE(offset);
      JSON.parse(buffer.toString("utf8", offset + 8, offset + 8 + length));
      frames++;
      offset += 8 + length;
    }
  }
  return { files: files.length, frames, bytes };
}
