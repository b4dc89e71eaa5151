// CPU time of the fleet benchmark's worker processes, read from /proc (both engines' workers).
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
