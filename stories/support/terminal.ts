// Printing for stories: colour only on a TTY (NO_COLOR turns it off, FORCE_COLOR on), sizes and times.
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

type Paint = (text: string | number) => string;

export function colours(stream: { isTTY?: boolean } = process.stdout) {
  const env = process.env;
  const on =
    env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false"
      ? true
      : !("NO_COLOR" in env) && stream.isTTY === true;
  const sgr =
    (open: number, close: number): Paint =>
    (text) =>
      on ? `\u001b[${open}m${text}\u001b[${close}m` : String(text);
  return {
    on,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}

/** 512 B, 12.3 KiB, 4.0 MiB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function ms(value: number): string {
  return value < 1000 ? `${value.toFixed(value < 10 ? 1 : 0)} ms` : `${(value / 1000).toFixed(2)} s`;
}

/** Bytes of every file under `dir`. */
export async function bytesOnDisk(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await bytesOnDisk(path) : (await stat(path)).size;
  }
  return total;
}

/** Messages between a story and the processes it spawns: one JSON object per stdout line after this tag. */
export const CHILD_TAG = "@@loomwork ";

export function tell(message: Record<string, unknown>): void {
  process.stdout.write(`${CHILD_TAG}${JSON.stringify(message)}\n`);
}
