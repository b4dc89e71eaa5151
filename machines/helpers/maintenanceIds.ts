// The ids of the runtime's maintenance machines (machines/sweep.ts, machines/eraseCoordinator.ts) and of
// the internal effects they invoke, apart from the machines: the app checks ids at start, and a module
// that reads an id does not import the machine defined beside it (a bundler keeps or drops an app's code
// by module).

/** The sweep's machine id, journaled as the sweep executions' logic id. */
export const SWEEP_LOGIC_ID = "loom.sweep";

/** The runtime's internal effects the sweep invokes (never user-visible, never in the effect chain). */
export const SWEEP_EFFECTS = {
  begin: "loom.sweep.begin",
  scan: "loom.sweep.scan",
  reclaim: "loom.sweep.reclaim",
} as const;

/** The erase coordinator's machine id, journaled as the coordinators' logic id. */
export const ERASE_COORDINATOR_LOGIC_ID = "loom.eraseCoordinator";

/** The runtime's internal effects the coordinator invokes. */
export const ERASE_EFFECTS = {
  plan: "loom.erase.plan",
  journalIntent: "loom.erase.journalIntent",
  shred: "loom.erase.shred",
  deleteContent: "loom.erase.deleteContent",
  journalResult: "loom.erase.journalResult",
} as const;

/** The retention coordinator's machine id, journaled as its executions' logic id (`loom.retention:<n>`). */
export const RETENTION_LOGIC_ID = "loom.retention";

/** The runtime's internal effects the retention coordinator invokes. */
export const RETENTION_EFFECTS = {
  select: "loom.retention.select",
  remove: "loom.retention.remove",
} as const;
