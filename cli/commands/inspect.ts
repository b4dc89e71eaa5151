// loomwork inspect <executionId> --ws <url>: plays a recorded journal to an XState inspector through
// @statelyai/inspect's WebSocket inspector, each message stamped with its record's original time.
import { setTimeout as sleep } from "node:timers/promises";
import {
  EVENT_RECEIVED,
  EXECUTION_ENDED,
  EXECUTION_STARTED,
  STEP_COMPLETED,
  STEP_FAILED,
  TRANSITION,
} from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { command } from "../context.js";
import { inferDefinition, stateValueOf } from "../../actors/journal/inferredDefinition.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { ChildTracker } from "../../actors/journal/inspectChildren.js";
import { readRecords, requireExecution } from "../journal.js";
import type { InspectedState } from "../replay.js";
import { progress } from "../terminal.js";

/** One macrostep of the journal: the input record and what it caused. */
interface Macrostep {
  at: number;
  event: Record<string, unknown> & { type: string };
  to?: unknown;
  ended?: StoredRecord;
}

const INPUTS = new Set<string>([EXECUTION_STARTED, EVENT_RECEIVED, STEP_COMPLETED, STEP_FAILED]);

/** Groups records into macrosteps; a stop (EXECUTION_ENDED on its own) is a step of its own. */
export function macrosteps(records: StoredRecord[]): Macrostep[] {
  const steps: Macrostep[] = [];
  let current: Macrostep | undefined;
  for (const r of records) {
    if (INPUTS.has(r.type)) {
      current = { at: r.at, event: eventOf(r) };
      steps.push(current);
    } else if (r.type === TRANSITION && current) {
      current.to = r.to;
      // A step outcome's event is named by the transition it caused (xstate.done.actor.<child id>).
      if (current.event.type === STEP_COMPLETED || current.event.type === STEP_FAILED)
        current.event = { ...current.event, type: String(r.event) };
    } else if (r.type === EXECUTION_ENDED) {
      if (current && !current.ended) current.ended = r;
      else steps.push((current = { at: r.at, event: { type: "xstate.stop" }, ended: r }));
    }
  }
  return steps;
}

function eventOf(r: StoredRecord): Macrostep["event"] {
  switch (r.type) {
    case EXECUTION_STARTED:
      return { type: "xstate.init", input: r.input };
    case EVENT_RECEIVED:
      return { type: "?", ...(r.event as object) } as Macrostep["event"];
    case STEP_COMPLETED:
      return { type: STEP_COMPLETED, stepId: r.stepId, output: r.output };
    default:
      return { type: STEP_FAILED, stepId: r.stepId, error: r.error };
  }
}

interface WebSocketAdapterLike {
  status?: string;
  ws?: { readyState: number; bufferedAmount: number };
}

export const inspect = command(
  "inspect",
  "Play a recorded journal to an XState inspector (Stately) over a WebSocket, with the records' original timestamps.",
  {
    args: { "<executionId>": "the execution to play" },
    options: {
      ws: {
        type: "string",
        value: "<url>",
        description: "the inspector server's WebSocket, e.g. ws://127.0.0.1:8080 (required)",
      },
      logic: {
        type: "string",
        value: "<module>",
        description: "a module exporting the machine: its definition and real snapshots (context) are sent",
      },
      pace: {
        type: "boolean",
        description: "keep the original gaps between records (each capped at 1 s) instead of sending at once",
      },
      "timeout-ms": {
        type: "string",
        value: "<ms>",
        description: "how long to wait for the inspector to accept the messages (default 5000)",
      },
      seq: {
        type: "string",
        value: "<n>",
        description: "time travel: play the journal only up to seq n (through the end of the macrostep that holds it)",
      },
    },
    details: [
      "Sends @xstate.actor (with the machine definition), then @xstate.event and @xstate.snapshot for every macrostep, with " +
        "createdAt set to the record's `at` and the session id loom:<executionId> the live runtime uses. Without --logic the " +
        "definition is inferred from the journal's transitions and snapshots carry the state value only. The actor is named after the " +
        "execution id, as on the live path; with --logic the steps the snapshots list are announced as child actors " +
        "(session loom:<executionId>/<childId>, parent the execution) and end with their outcome.",
      "--seq <n> plays the execution as it was at seq n: the inspector shows that state, and a later run with a larger n replays further.",
      "An inspector server: node -e \"import('loomwork/inspector').then((m) => m.createInspectorServer({ open: true }))\" " +
        "(ws://127.0.0.1:8080, on 127.0.0.1 only; opens the Stately inspector in a browser).",
    ],
    examples: [
      "loomwork inspect research-1 --ws ws://127.0.0.1:8080",
      "loomwork inspect research-1 --ws ws://127.0.0.1:8080 --seq 12",
      "loomwork inspect research-1 --ws ws://127.0.0.1:8080 --logic stories/support/researchAgent.ts --pace",
    ],
  },
  async (ctx) => {
    const url = ctx.values.ws;
    if (typeof url !== "string")
      throw new UsageError(
        "--ws <url> is required",
        "Point it at an inspector server, e.g. --ws ws://127.0.0.1:8080 (see `loomwork inspect --help`).",
      );
    if (!/^wss?:\/\//.test(url)) throw new UsageError(`--ws must be a ws:// or wss:// URL; got "${url}"`);
    const timeoutMs = Number(ctx.values["timeout-ms"] ?? 5000);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`--timeout-ms must be a positive number; got "${String(ctx.values["timeout-ms"])}"`);
    const stores = await ctx.journal();
    const executionId = ctx.positionals[0]!;
    const info = await requireExecution(stores, executionId);
    const records = await upToSeq(await readRecords(stores, executionId), ctx.values.seq);
    const logicId = info.logicId ?? "execution";
    const replay = typeof ctx.values.logic === "string" ? await import("../replay.js") : undefined;
    const logic =
      replay && typeof ctx.values.logic === "string"
        ? (await replay.loadLogics(ctx.values.logic)).find((m) => m.id === logicId)
        : undefined;
    if (typeof ctx.values.logic === "string" && !logic)
      throw new UsageError(
        `--logic ${ctx.values.logic} has no machine with id "${logicId}" (the id this execution was started with)`,
      );
    const replayed: InspectedState[] | undefined =
      logic && replay ? (await replay.replayInMemory(executionId, records, logic)).snapshots : undefined;

    let inspectModule: typeof import("@statelyai/inspect");
    try {
      inspectModule = await import("@statelyai/inspect");
    } catch {
      throw new CliError(
        "`loomwork inspect` needs the @statelyai/inspect package",
        EXIT.failure,
        "Install it: npm install --save-dev @statelyai/inspect",
      );
    }
    const sessionId = `loom:${executionId}`;
    let createdAt = records[0]?.at ?? info.startedAt;
    // The inspector stamps createdAt with Date.now(): restamp each message with its record's time. Messages
    // queued before the socket opened pass through serialize again, so a stamped one is left as it is.
    const stamped = new WeakSet<object>();
    const inspector = inspectModule.createWebSocketInspector({
      url,
      serialize: (event) => {
        if (stamped.has(event)) return event;
        // One naming rule with the live path: the execution's actor is named after the execution id.
        const root =
          event.type === "@xstate.actor" && event.sessionId === sessionId
            ? { parentId: undefined, name: executionId }
            : {};
        const out = { ...event, createdAt: String(createdAt), rootId: sessionId, ...root };
        stamped.add(out);
        return out;
      },
    });
    const definition = logic ? logic.config : inferDefinition(logicId, records);
    const actorRef = { sessionId, id: executionId, logic: { config: definition } } as unknown as Parameters<
      typeof inspector.actor
    >[0];
    const steps = macrosteps(records);
    const children = new ChildTracker(sessionId);
    type Ref = Parameters<typeof inspector.actor>[0];
    const childRef = (childId: string, childSession: string) =>
      ({
        sessionId: childSession,
        id: childId,
        _parent: { sessionId },
        logic: { config: { id: childId } },
      }) as unknown as Ref;
    const bar = progress("sending", steps.length, { atLeast: 200 });
    let sent = 0;
    const snapshotAt = (k: number, step: Macrostep) => {
      const real = replayed?.[k];
      const status = step.ended ? String(step.ended.status) : "active";
      return {
        status: (real?.status ?? status) as "active",
        value: real ? real.value : stateValueOf(step.to ?? steps[k - 1]?.to),
        context: real?.context ?? {},
        ...(step.ended?.output !== undefined ? { output: step.ended.output } : {}),
      };
    };
    try {
      // The inspector keeps at most 200 messages while its socket connects: send once it is open.
      await delivered(inspector.adapter as unknown as WebSocketAdapterLike, timeoutMs, url);
      for (const [k, step] of steps.entries()) {
        createdAt = step.at;
        if (k === 0) {
          inspector.actor(actorRef, snapshotAt(0, step));
          sent++;
        }
        inspector.event(actorRef, step.event);
        const changes = replayed?.[k] ? children.step(step.event, replayed[k].children) : { started: [], ended: [] };
        for (const c of changes.ended)
          inspector.snapshot(childRef(c.childId, c.sessionId), c.snapshot as { status: "done" }, { event: step.event });
        inspector.snapshot(actorRef, snapshotAt(k, step), { event: step.event });
        for (const c of changes.started) inspector.actor(childRef(c.childId, c.sessionId), { status: "active" });
        sent += 2 + changes.ended.length + changes.started.length;
        bar.tick(k + 1);
        const next = steps[k + 1];
        if (ctx.values.pace === true && next) await sleep(Math.min(1000, Math.max(0, next.at - step.at)));
      }
      await delivered(inspector.adapter as unknown as WebSocketAdapterLike, timeoutMs, url);
    } finally {
      bar.end();
      inspector.stop();
    }
    const summary = {
      executionId,
      url,
      macrosteps: steps.length,
      messages: sent,
      toSeq: records.at(-1)?.seq ?? 0,
      definition: logic ? "logic" : "inferred",
      from: records[0]?.at,
      to: records.at(-1)?.at,
    };
    if (ctx.json) return ctx.printJson(summary);
    ctx.out(
      `sent ${sent} inspection events for ${executionId} (${steps.length} macrosteps, ${logic ? `definition of ${logic.id}` : "definition inferred from the journal"}) to ${url}`,
    );
  },
);

/** The records up to seq `seq`, through the end of the macrostep that holds it (all of them without --seq). */
async function upToSeq(records: StoredRecord[], seq: unknown): Promise<StoredRecord[]> {
  if (seq === undefined) return records;
  // Loaded only here: it brings the runtime, which the other commands do without.
  const { recordsThrough } = await import("../../actors/inspectReplay.js");
  try {
    if (!/^\d+$/.test(String(seq))) throw new RangeError("not a whole number");
    return recordsThrough(records, Number(seq));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new UsageError(`--seq must be a seq of the journal, 1 to ${records.at(-1)?.seq ?? 0}; got "${String(seq)}"`);
  }
}

/** Resolves once the socket is open and has flushed everything sent so far; rejects after `timeoutMs`. */
async function delivered(adapter: WebSocketAdapterLike, timeoutMs: number, url: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (adapter.status === "open" && adapter.ws?.readyState === 1 && adapter.ws.bufferedAmount === 0) return;
    await sleep(20);
  }
  throw new CliError(
    `could not deliver to the inspector at ${url} within ${timeoutMs} ms`,
    EXIT.failure,
    "Is an inspector server listening there? Start one: node -e \"import('loomwork/inspector').then((m) => m.createInspectorServer({ open: true }))\"",
  );
}
