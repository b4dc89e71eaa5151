// The content sweep as a pure machine (ADR 0140 D6, sweep side): begin (take the touch cutoff and the
// time) -> scan (walk every live log, archive segment and snapshot for citations) -> reclaim, one
// journaled batch per slice of the address space -> done. The runtime runs it as a journaled execution
// of its own (`loom.sweep:<n>`), so a crash mid-sweep is finished by resuming it: every completed step
// is served from the log, and the batch in flight runs again with the same cutoff.
import { assign, setup } from "xstate";
import { effectActor, stepInput } from "./helpers/effectActor.js";
import { SWEEP_EFFECTS, SWEEP_LOGIC_ID } from "./helpers/maintenanceIds.js";

export { SWEEP_EFFECTS, SWEEP_LOGIC_ID };

export interface SweepInput {
  /** Telemetry refs (no load-bearing `retain`) are reclaimable this long after their citation (or their execution's end). */
  ttlMs: number;
  /** How many journaled reclaim batches the address space is cut into. */
  batches: number;
}

/** What `begin` records: every delete is conditional on `touchCutoff`; TTLs are measured at `startedAt`. */
export interface SweepBegun {
  touchCutoff: number;
  startedAt: number;
}

/** What `scan` records: counts only (the cited set itself stays in memory, never in the log). */
export interface SweepScanned {
  executions: number;
  cited: number;
  pinned: number;
  /** A sealed record without readable refs was met: the sweep deletes nothing (fail closed). */
  unknownCitations: boolean;
}

/** What one reclaim batch records. */
export interface SweepBatch {
  scanned: number;
  kept: number;
  deleted: number;
  spared: number;
  bytesDeleted: number;
}

export interface SweepBatchInput extends SweepInput, SweepBegun {
  batch: number;
}

/** `sweep(app)` / `sweepUnpinnedContent()`: what the sweep found and did. */
export interface SweepResult extends SweepBatch, SweepBegun {
  /** The sweep's own execution id (`loom.sweep:<n>`): its journal is the audit trail. */
  sweepId: string;
  /** Histories walked (live logs with their archive segments and snapshot). */
  executions: number;
  /** Distinct addresses cited anywhere; `pinned` of them load-bearing. */
  cited: number;
  pinned: number;
  unknownCitations: boolean;
  batches: number;
}

export interface SweepContext extends SweepInput, SweepBegun, SweepBatch {
  sweepId: string;
  batch: number;
  executions: number;
  cited: number;
  pinned: number;
  unknownCitations: boolean;
}

/** The sweep as a pure XState machine, run as a journaled execution by `sweep(app)`. */
export const sweepMachine = setup({
  types: {} as {
    context: SweepContext;
    input: SweepInput & { sweepId: string };
    output: SweepResult;
  },
  actors: {
    [SWEEP_EFFECTS.begin]: effectActor<Record<string, never>, SweepBegun>(),
    [SWEEP_EFFECTS.scan]: effectActor<SweepBegun & SweepInput, SweepScanned>(),
    [SWEEP_EFFECTS.reclaim]: effectActor<SweepBatchInput, SweepBatch>(),
  },
  guards: {
    moreBatches: ({ context }) => context.batch < context.batches,
  },
}).createMachine({
  id: SWEEP_LOGIC_ID,
  context: ({ input }) => ({
    sweepId: input.sweepId,
    ttlMs: input.ttlMs,
    batches: input.batches,
    batch: 0,
    touchCutoff: 0,
    startedAt: 0,
    executions: 0,
    cited: 0,
    pinned: 0,
    unknownCitations: false,
    scanned: 0,
    kept: 0,
    deleted: 0,
    spared: 0,
    bytesDeleted: 0,
  }),
  initial: "beginning",
  states: {
    beginning: {
      invoke: {
        src: SWEEP_EFFECTS.begin,
        id: "begin",
        input: () => stepInput("begin", {}),
        onDone: {
          target: "scanning",
          actions: assign(({ event }) => ({
            touchCutoff: event.output.touchCutoff,
            startedAt: event.output.startedAt,
          })),
        },
      },
    },
    scanning: {
      invoke: {
        src: SWEEP_EFFECTS.scan,
        id: "scan",
        input: ({ context }) =>
          stepInput("scan", {
            touchCutoff: context.touchCutoff,
            startedAt: context.startedAt,
            ttlMs: context.ttlMs,
            batches: context.batches,
          }),
        onDone: {
          target: "reclaiming",
          actions: assign(({ event }) => ({
            executions: event.output.executions,
            cited: event.output.cited,
            pinned: event.output.pinned,
            unknownCitations: event.output.unknownCitations,
          })),
        },
      },
    },
    reclaiming: {
      invoke: {
        src: SWEEP_EFFECTS.reclaim,
        id: "reclaim",
        input: ({ context }) =>
          stepInput(`reclaim:${context.batch}`, {
            batch: context.batch,
            batches: context.batches,
            ttlMs: context.ttlMs,
            touchCutoff: context.touchCutoff,
            startedAt: context.startedAt,
          }),
        onDone: {
          target: "nextBatch",
          actions: assign(({ context, event }) => ({
            batch: context.batch + 1,
            scanned: context.scanned + event.output.scanned,
            kept: context.kept + event.output.kept,
            deleted: context.deleted + event.output.deleted,
            spared: context.spared + event.output.spared,
            bytesDeleted: context.bytesDeleted + event.output.bytesDeleted,
          })),
        },
      },
    },
    nextBatch: {
      always: [{ guard: "moreBatches", target: "reclaiming" }, { target: "done" }],
    },
    done: { type: "final" },
  },
  output: ({ context }) => ({
    sweepId: context.sweepId,
    executions: context.executions,
    cited: context.cited,
    pinned: context.pinned,
    unknownCitations: context.unknownCitations,
    batches: context.batches,
    touchCutoff: context.touchCutoff,
    startedAt: context.startedAt,
    scanned: context.scanned,
    kept: context.kept,
    deleted: context.deleted,
    spared: context.spared,
    bytesDeleted: context.bytesDeleted,
  }),
});
