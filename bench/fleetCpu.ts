// CPU time of the fleet benchmark's worker processes, read from /proc (both engines' workers), and their start.
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU milliseconds a process has used so far (utime + stime from /proc; 0 where there is no /proc). */
export function processCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The CPU milliseconds of several processes together. */
export function processesCpuMs(pids: (number | undefined)[]): number {
  return pids.reduce<number>((sum, pid) => sum + processCpuMs(pid), 0);
}

/**
 * Waits for worker processes starting together and adds each one that started to `children` (so the caller's
 * clean-up kills it) before rethrowing the first failure.
 */
export async function startedAll(starting: Promise<ChildProcess>[], children: ChildProcess[]): Promise<void> {
  const settled = await Promise.allSettled(starting);
  for (const s of settled) if (s.status === "fulfilled") children.push(s.value);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
}
