// The floor of a resume from fs, in the same kind of fresh process: read the journal's files (the
// catalogue checkpoint, the log, the snapshot) and JSON.parse every frame's payload. Nothing else.
import { readFsFloor } from "../fsFloor.js";
import { span } from "../measure.js";
import { report } from "../spawn.js";

const { dir } = JSON.parse(process.argv[2]!) as { dir: string };
const end = span();
const { files, frames, bytes } = await readFsFloor(dir);
const { wall, cpu } = end();
report({ ms: wall, cpuMs: cpu, files, frames, bytes });
