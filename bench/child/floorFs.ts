// The floor of a resume from fs, in the same kind of fresh process: read the journal's files (the
// catalogue checkpoint, the log, the snapshot) and JSON.parse every frame's payload. Nothing else.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { span } from "../measure.js";
import { report } from "../spawn.js";

const { dir } = JSON.parse(process.argv[2]!) as { dir: string };
const end = span();
const files = [join(dir, "catalogue.ckpt")];
for (const name of await readdir(join(dir, "executions"))) {
  for (const file of await readdir(join(dir, "executions", name))) files.push(join(dir, "executions", name, file));
}
let values = 0;
let bytes = 0;
for (const file of files) {
  const buffer = await readFile(file);
  bytes += buffer.length;
  // A frame is [u32 length][u32 crc][payload]; the floor skips the checksum.
  for (let offset = 0; offset + 8 <= buffer.length;) {
    const length = buffer.readUInt32LE(offset);
    JSON.parse(buffer.toString("utf8", offset + 8, offset + 8 + length));
    values++;
    offset += 8 + length;
  }
}
const { wall, cpu } = end();
report({ ms: wall, cpuMs: cpu, files: files.length, frames: values, bytes });
