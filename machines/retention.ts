// The retention coordinator as a pure machine (issue 37, "Retention"): select a batch of ended executions past their
// retention period, journaling what each leaves behind (its summary) -> remove them -> select the next batch, until a
// selection comes back empty. The runtime runs it as a journaled execution of its own (`loom.retention:<n>`), as it
// runs the sweep and the erase coordinator: a crash mid-way is finished by resuming it, every batch already removed is
// served from its log, and the batch in flight is removed again (each removal is idempotent).
import { assign, setup } from "xstate";
import { effectActor, stepInput } from "./helpers/effectActor.js";
import { RETENTION_EFFECTS, RETENTION_LOGIC_ID } from "./helpers/maintenanceIds.js";

export { RETENTION_EFFECTS, RETENTION_LOGIC_ID };

/** What an execution keeps once past its period: a summary (outcome, usage, ids, times), or nothing at all. */
export type RetentionKeep = "summary" | "nothing";

/** One retention rule: how long an ended execution is kept whole, and what is left of it after. */
export interface RetentionRule {
  /** Milliseconds after an execution's tree ended (its root's end) before it is removed. */
  keepFor: number;
  /** What remains: `"summary"` (the default) or `"nothing"`. @defaultValue "summary" */
  keep?: RetentionKeep;
}

/** What the coordinator is started with: the rules (by logic id, with a default), the batch size, the time. */
export interface RetentionInput {
  retentionId: string;
  rules: { default?: RetentionRule; byLogic: Record<string, RetentionRule> };
  batchSize: number;
}

/** What is left of an execution kept as a summary, journaled in the coordinator's log before anything is removed. */
export interface RetentionSummary {
  executionId: string;
  keep: RetentionKeep;
  logicId?: string;
  machineHash?: string;
  version?: string;
  subject?: string;
  parent?: { executionId: string; childId: string; stepId: string };
  root?: string;
  status: string;
  startedAt: number;
  endedAt: number;
  /** The execution's model usage, summed from its log (absent when its records could not be opened: an erased subject). */
  usage?: { modelCalls: number; inputTokens: number; outputTokens: number; totalTokens: number };
  /** A failed execution's error, by name and code only (its message may hold personal data). */
  error?: { name: string; code?: string };
}

/** What one selection records: the batch to remove, each with its summary, and the time it was taken at. */
export interface RetentionSelection {
  at: number;
  batch: RetentionSummary[];
}

/** What one removal records. */
export interface RetentionRemoval {
  removed: number;
  summarized: number;
}

/** `applyRetention(app)`: what the coordinator removed, and its own execution id (its log is the audit trail). */
export interface RetentionResult extends RetentionRemoval {
  retentionId: string;
  batches: number;
}

interface RetentionContext extends RetentionInput, RetentionRemoval {
  round: number;
  batch: RetentionSummary[];
}

/** The retention coordinator as a pure XState machine, run as a journaled execution by `applyRetention(app)`. */
export const retentionMachine = setup({
  types: {} as { context: RetentionContext; input: RetentionInput; output: RetentionResult },
  actors: {
    [RETENTION_EFFECTS.select]: effectActor<Omit<RetentionInput, "retentionId">, RetentionSelection>(),
    [RETENTION_EFFECTS.remove]: effectActor<{ batch: RetentionSummary[] }, RetentionRemoval>(),
  },
}).createMachine({
  id: RETENTION_LOGIC_ID,
  context: ({ input }) => ({ ...input, round: 0, batch: [], removed: 0, summarized: 0 }),
  initial: "selecting",
  states: {
    selecting: {
      invoke: {
        src: RETENTION_EFFECTS.select,
        id: "select",
        input: ({ context }) =>
          stepInput(`select:${context.round}`, { rules: context.rules, batchSize: context.batchSize }),
        onDone: [
          { guard: ({ event }) => event.output.batch.length === 0, target: "done" },
          { target: "removing", actions: assign({ batch: ({ event }) => event.output.batch }) },
        ],
      },
    },
    removing: {
      invoke: {
        src: RETENTION_EFFECTS.remove,
        id: "remove",
        input: ({ context }) => stepInput(`remove:${context.round}`, { batch: context.batch }),
        onDone: {
          target: "selecting",
          actions: assign(({ context, event }) => ({
            round: context.round + 1,
            batch: [],
            removed: context.removed + event.output.removed,
            summarized: context.summarized + event.output.summarized,
          })),
        },
      },
    },
    done: { type: "final" },
  },
  output: ({ context }) => ({
    retentionId: context.retentionId,
    batches: context.round,
    removed: context.removed,
    summarized: context.summarized,
  }),
});
