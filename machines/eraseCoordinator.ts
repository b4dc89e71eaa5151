// Erasure as a pure machine (ADR 0140 D8, D11 (3), D12): plan -> journal the intent -> shred -> delete
// the blobs conditionally -> journal the result. The runtime runs it as a journaled execution of its own
// (`loom.erase:<subject>:<n>`), so a crash between any two steps is finished by resuming it: the plan and
// the intent are served from the log, and the step in flight runs again (each is idempotent).
//
// The refusal (ContentCopiesRemainError) is raised by the plan step, before the intent and the shred.
// Any failed step ends the machine in `failed`; nothing after it runs.
import { assign, setup } from "xstate";
import { effectActor, stepInput } from "./helpers/effectActor.js";
import { ERASE_COORDINATOR_LOGIC_ID, ERASE_EFFECTS } from "./helpers/maintenanceIds.js";

export { ERASE_COORDINATOR_LOGIC_ID, ERASE_EFFECTS };

export interface ErasePlan {
  /** The subject's executions (by id) when the plan was made. */
  executions: string[];
  /** Of those, the ones with any unsealed record or snapshot: the shred deletes their whole history. */
  deleteHistories: string[];
  /** Blobs only the subject's executions cite (that still exist, and no other execution's offload had in flight when the plan began): the conditional deletes. */
  addresses: string[];
  /** The content store's touch clock at plan time; null when there is nothing to delete and no clock. */
  touchCutoff: number | null;
  /** The subject's key was already destroyed when this erasure began. */
  alreadyErased: boolean;
}

/** What an erasure deleted and retained. */
export interface ContentDeleted {
  deleted: number;
  /** Spared: re-put (touched) since the cutoff, or offloaded by another execution in flight at the delete or since the plan began: another execution owns a copy now. */
  retained: number;
}

/** `eraseSubject(app, subject)`: what the erasure did. */
export interface EraseSubjectResult {
  subject: string;
  /** The subject's executions: crypto-shredded in place (sealed) or deleted (unsealed). */
  executions: string[];
  /** True once the subject's key is destroyed: every sealed record and blob of the subject is unreadable. */
  shredded: boolean;
  /** The key was already destroyed before this request (a repeated erase is a successful no-op). */
  alreadyErased: boolean;
  /** Histories deleted whole because they held unsealed records. */
  historiesDeleted: string[];
  contentDeleted: ContentDeleted;
  /** The coordinator's execution id: its journal holds the intent and the result. */
  coordinatorId: string;
  /** Seq of ERASURE_CONTENT_DELETE_INTENDED in the coordinator's log. */
  intentSeq: number;
}

export type EraseCoordinatorOutput =
  | ({ status: "erased" } & EraseSubjectResult)
  | { status: "failed"; subject: string; coordinatorId: string; error: unknown };

export interface EraseContext {
  subject: string;
  coordinatorId: string;
  plan?: ErasePlan;
  intentSeq: number;
  shredded: boolean;
  contentDeleted: ContentDeleted;
  error?: unknown;
}

const fail = { target: "failed", actions: "recordError" } as const;

/** The erase coordinator as a pure XState machine, run as a journaled execution by `eraseSubject(app, subject)`. */
export const eraseCoordinatorMachine = setup({
  types: {} as {
    context: EraseContext;
    input: { subject: string; coordinatorId: string };
    output: EraseCoordinatorOutput;
  },
  actors: {
    [ERASE_EFFECTS.plan]: effectActor<{ subject: string }, ErasePlan>(),
    [ERASE_EFFECTS.journalIntent]: effectActor<
      { subject: string; addresses: string[]; touchCutoff: number | null },
      { intentSeq: number }
    >(),
    [ERASE_EFFECTS.shred]: effectActor<{ subject: string; deleteHistories: string[] }, { shredded: boolean }>(),
    [ERASE_EFFECTS.deleteContent]: effectActor<
      { subject: string; addresses: string[]; touchCutoff: number | null },
      ContentDeleted
    >(),
    [ERASE_EFFECTS.journalResult]: effectActor<
      { subject: string; intentSeq: number } & ContentDeleted,
      { seq: number }
    >(),
  },
  actions: {
    // Only onError takes this action: its event is an `xstate.error.actor.*` event, which carries the error.
    recordError: assign({
      error: ({ event }) => ("error" in event ? event.error : undefined) ?? { name: "Error", message: "a step failed" },
    }),
  },
}).createMachine({
  id: ERASE_COORDINATOR_LOGIC_ID,
  context: ({ input }) => ({
    subject: input.subject,
    coordinatorId: input.coordinatorId,
    intentSeq: 0,
    shredded: false,
    contentDeleted: { deleted: 0, retained: 0 },
  }),
  initial: "planning",
  states: {
    planning: {
      invoke: {
        src: ERASE_EFFECTS.plan,
        id: "plan",
        input: ({ context }) => stepInput("plan", { subject: context.subject }),
        onDone: { target: "journalingIntent", actions: assign({ plan: ({ event }) => event.output }) },
        onError: fail,
      },
    },
    journalingIntent: {
      invoke: {
        src: ERASE_EFFECTS.journalIntent,
        id: "journalIntent",
        input: ({ context }) =>
          stepInput("intent", {
            subject: context.subject,
            addresses: context.plan!.addresses,
            touchCutoff: context.plan!.touchCutoff,
          }),
        onDone: { target: "shredding", actions: assign({ intentSeq: ({ event }) => event.output.intentSeq }) },
        onError: fail,
      },
    },
    shredding: {
      invoke: {
        src: ERASE_EFFECTS.shred,
        id: "shred",
        input: ({ context }) =>
          stepInput("shred", { subject: context.subject, deleteHistories: context.plan!.deleteHistories }),
        onDone: { target: "deletingContent", actions: assign({ shredded: ({ event }) => event.output.shredded }) },
        onError: fail,
      },
    },
    deletingContent: {
      invoke: {
        src: ERASE_EFFECTS.deleteContent,
        id: "deleteContent",
        input: ({ context }) =>
          stepInput("delete", {
            subject: context.subject,
            addresses: context.plan!.addresses,
            touchCutoff: context.plan!.touchCutoff,
          }),
        onDone: { target: "journalingResult", actions: assign({ contentDeleted: ({ event }) => event.output }) },
        onError: fail,
      },
    },
    journalingResult: {
      invoke: {
        src: ERASE_EFFECTS.journalResult,
        id: "journalResult",
        input: ({ context }) =>
          stepInput("result", { subject: context.subject, intentSeq: context.intentSeq, ...context.contentDeleted }),
        onDone: { target: "erased" },
        onError: fail,
      },
    },
    erased: { type: "final" },
    failed: { type: "final" },
  },
  output: ({ context }): EraseCoordinatorOutput =>
    context.error !== undefined || !context.plan
      ? { status: "failed", subject: context.subject, coordinatorId: context.coordinatorId, error: context.error }
      : {
          status: "erased",
          subject: context.subject,
          executions: context.plan.executions,
          shredded: context.shredded,
          alreadyErased: context.plan.alreadyErased,
          historiesDeleted: context.plan.deleteHistories,
          contentDeleted: context.contentDeleted,
          coordinatorId: context.coordinatorId,
          intentSeq: context.intentSeq,
        },
});
