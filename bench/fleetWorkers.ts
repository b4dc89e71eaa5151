// The fleet benchmark's worker processes (both engines'): started together, killed, and their schema dropped.
import type { ChildProcess } from "node:child_process";
import { dropSchema } from "../spec/postgres/server.js";

/** PostgreSQL's SQLSTATE for a deadlock the server broke by aborting one of the transactions. */
const DEADLOCK_DETECTED = "40P01";
const DROP_ATTEMPTS = 10;
const DROP_RETRY_MS = 200;

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

/** Kills the worker processes and waits until each has exited (its sockets closed). */
export async function killed(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

/**
 * Drops a run's schema after its workers were killed. A killed worker's backend runs on until the server reads
 * the closed socket, and may still hold row locks that `DROP SCHEMA ... CASCADE` waits for while taking locks
 * that backend then waits for: the server aborts the drop as a deadlock, and it is tried again.
 */
export async function dropSchemaOfKilled(url: string, schema: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await dropSchema(url, schema);
    } catch (error) {
      if ((error as { code?: string }).code !== DEADLOCK_DETECTED || attempt >= DROP_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, DROP_RETRY_MS));
    }
  }
}
