// The runtime's own ids and prefixes, built in one place: every module that names a maintenance
// execution or recognises a control record calls these, so a guard and the coordinator never disagree
// on how an id is spelled (a subject such as `user@example.com` is URI-encoded in its coordinator's id).

/** The prefix of every erase coordinator's execution id. */
export const ERASE_COORDINATOR_ID_PREFIX = "loom.erase:";

/** The prefix of the coordinators' execution ids for one subject: `loom.erase:<URI-encoded subject>:`. */
export function eraseCoordinatorPrefix(subject: string): string {
  return `${ERASE_COORDINATOR_ID_PREFIX}${encodeURIComponent(subject)}:`;
}

/** The execution id of a subject's `n`-th erase coordinator: `loom.erase:<URI-encoded subject>:<n>`. */
export function eraseCoordinatorId(subject: string, n: number): string {
  return `${eraseCoordinatorPrefix(subject)}${n}`;
}

/** The coordinator's number `n` in an id built by `eraseCoordinatorId` for `subject`, or 0 when the id is not one. */
export function eraseCoordinatorNumber(subject: string, executionId: string): number {
  const prefix = eraseCoordinatorPrefix(subject);
  if (!executionId.startsWith(prefix)) return 0;
  const n = Number(executionId.slice(prefix.length));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** The prefix of the control records' types (`loom.erasure.*`: erasure's intent and result). */
export const CONTROL_RECORD_PREFIX = "loom.erasure.";

/** True for a control record: it stands between two macrosteps and replay skips it. */
export function isControlRecord(type: string): boolean {
  return type.startsWith(CONTROL_RECORD_PREFIX);
}
