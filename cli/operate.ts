// How an operating command (send, approve, deny, stop, resume) reaches an execution: through the app
// that holds the journal's writer lock, over its control socket (serveControl in loomwork/fs); else, when
// no app holds it, the CLI takes the lock and journals the command itself with the machine from --logic.
import type { AnyStateMachine } from "xstate";
import { checkExternalEvent } from "../actors/journal/externalEvents.js";
import { requiredEffects } from "../actors/logics.js";
import type { ControlEvent } from "../adapters/fs/control.js";
import type { ExecutionInfo } from "../index.js";
import { WriterLockedError } from "../stores/errors.js";
import type { Context } from "./context.js";
import { connectControl } from "./control.js";
import { AppUnreachableError, ExecutionEndedError, NoAppError, UsageError } from "./errors.js";
import { isSealed, openJournal, readRecords, requireExecution } from "./journal.js";

export type Operation = { op: "send"; event: ControlEvent } | { op: "stop"; reason?: string } | { op: "resume" };

export interface Outcome {
  executionId: string;
  op: Operation["op"];
  /** "app": the running app did it; "journal": no app held the journal, the CLI journaled it. */
  via: "app" | "journal";
  status: string;
  value?: unknown;
}

/** The execution, known and still running (read-only, beside a running app). */
export async function requireRunning(ctx: Context, executionId: string): Promise<ExecutionInfo> {
  const info = await requireExecution(await ctx.journal(), executionId);
  if (info.status !== "running") throw new ExecutionEndedError(executionId, info.status);
  return info;
}

/** Runs `operation` on the execution through the owning app, or journals it when no app holds the journal. */
export async function operate(ctx: Context, executionId: string, operation: Operation): Promise<Outcome> {
  await requireRunning(ctx, executionId);
  const client = await connectControl(ctx.dir);
  if (client) {
    try {
      return { executionId, op: operation.op, via: "app", ...(await client.request({ ...operation, executionId })) };
    } finally {
      client.close();
    }
  }
  if (operation.op === "resume") {
    // Say which it is: a live app that cannot be reached, or none at all.
    const stores = await openJournal(ctx.dir, { readOnly: false }).catch((error: unknown) =>
      Promise.reject(unreachable(error, ctx.dir)),
    );
    await stores.close();
    throw new NoAppError(executionId);
  }
  const logicSpec = ctx.values.logic;
  const stores = await openJournal(ctx.dir, { readOnly: false }).catch((error: unknown) =>
    Promise.reject(unreachable(error, ctx.dir)),
  );
  try {
    if (typeof logicSpec !== "string") {
      throw new UsageError(
        `no app holds the journal ${ctx.dir}, so the CLI journals the ${operation.op} itself, which needs the machine that runs "${executionId}"`,
        "Pass --logic <module> (a module exporting the machine, as for `loomwork stats --logic`), or start the app with serveControl so the command goes through it.",
      );
    }
    const { loadLogics } = await import("./replay.js");
    const logics = await loadLogics(logicSpec);
    const { createApp, defineConfig } = await import("../index.js");
    // Records are sealed only where the journal already seals them: never seal what the app wrote in the clear.
    const sealed = (await readRecords(stores, executionId)).some(isSealed);
    const app = createApp(
      defineConfig({
        stores,
        effects: neverSettling(logics),
        logics,
        ...(sealed ? { security: { crypto: { keys: stores.keys } } } : {}),
      }),
    );
    try {
      const actor = await app.resume(executionId);
      if (operation.op === "send") await actor.sendAsync(operation.event);
      else await app.stop(executionId, operation.reason ?? "stopped by loomwork stop");
      const snapshot = actor.getSnapshot();
      return {
        executionId,
        op: operation.op,
        via: "journal",
        status: operation.op === "stop" ? "stopped" : String(snapshot.status),
        value: snapshot.value,
      };
    } finally {
      await app.close();
    }
  } finally {
    await stores.close();
  }
}

// The CLI runs no model or tool: a step the command starts stays in flight, unrecorded, and runs when an app resumes the execution.
function neverSettling(logics: AnyStateMachine[]) {
  const never = { kind: "task" as const, run: () => new Promise<never>(() => undefined) };
  return Object.fromEntries(logics.flatMap((logic) => requiredEffects(logic)).map((id) => [id, never]));
}

function unreachable(error: unknown, dir: string): unknown {
  if (!(error instanceof WriterLockedError)) return error;
  const holder = error.cause instanceof Error ? /held by pid (\d+) on ([^ ]+)/.exec(error.cause.message) : null;
  return new AppUnreachableError(dir, holder ? ` (pid ${holder[1]} on ${holder[2]})` : "");
}

/** `<event-json>` parsed: a JSON object with a string `type`, else a UsageError that says what is wrong. */
export function parseEvent(text: string): ControlEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `<event-json> is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      `Quote it for the shell: loomwork send <id> '{"type":"USER_MESSAGE","text":"hi"}'`,
    );
  }
  if (
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value) ||
    typeof (value as { type?: unknown }).type !== "string"
  ) {
    throw new UsageError(
      `<event-json> must be a JSON object with a string "type"; got ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`,
      `For example: '{"type":"USER_MESSAGE","text":"hi"}'`,
    );
  }
  // The runtime's own check (reserved types, a TOOL_APPROVAL's shape), made here too so that what every app refuses
  // is a usage error before any app or journal is reached.
  try {
    return checkExternalEvent(value);
  } catch (error) {
    throw new UsageError(
      error instanceof Error ? error.message : String(error),
      "Send one of the machine's own event types; decide a parked tool call with `loomwork approve` or `loomwork deny`.",
    );
  }
}

/** Prints what was done, or the outcome as JSON. */
export function report(ctx: Context, outcome: Outcome, done: string): void {
  if (ctx.json) return ctx.printJson(outcome);
  const where =
    outcome.via === "app"
      ? "by the running app"
      : "in the journal (no app held it; a step it starts runs when an app resumes the execution)";
  const state =
    outcome.value === undefined
      ? ""
      : ` · now ${typeof outcome.value === "string" ? outcome.value : JSON.stringify(outcome.value)}`;
  ctx.out(`${done} ${where}${state} · ${outcome.status}`);
}
