// exportSubject (ADR 0140 D8, the Art. 15/20 export): every execution of a subject with its records opened,
// and every blob those records cite resolved, so the export is the data and not just refs.
import { fromUtf8, toBase64 } from "../stores/bytes.js";
import { SubjectErasedError } from "../stores/errors.js";
import type { ContentAddress, ExecutionStatus, JournalRecord, StoredSnapshot } from "../stores/types.js";
import type { App } from "./app.js";
import { visitCitedAddresses } from "./citations.js";
import { ConfigError } from "./errors.js";
import { isInternalLogic, keyStoresOf, lifecycleContentOf } from "./internalEffects.js";

/** One claim-checked blob of the subject, resolved: `value` (JSON), `bytesBase64` (not JSON), or `missing`. */
export interface ClaimCheckedBlob {
  address: ContentAddress;
  /** UTF-8 bytes of the offloaded JSON text, as the envelope recorded it. */
  size: number;
  digest: unknown;
  value?: unknown;
  bytesBase64?: string;
  /** The blob is gone (reclaimed by a sweep, or no content store is wired). */
  missing?: true;
  /** The executions whose records or snapshot cite it. */
  citedBy: string[];
}

/** One execution in a subject export, its records opened. */
export interface ExportedExecution {
  executionId: string;
  logicId?: string;
  status: ExecutionStatus;
  startedAt: number;
  endedAt?: number;
  /** Every record, archived ones first, opened. */
  records: JournalRecord[];
  /** The folded state at the latest snapshot, opened. */
  snapshot?: StoredSnapshot;
}

/** What `exportSubject` returns. */
export interface SubjectExport {
  subject: string;
  executions: ExportedExecution[];
  claimChecked: ClaimCheckedBlob[];
}

/** The subject's data from `app`'s stores; rejects with SubjectErasedError once the subject was erased. */
export async function exportFrom(app: App, subject: string): Promise<SubjectExport> {
  if (typeof subject !== "string" || subject === "") throw new ConfigError("exportSubject.subject", "a non-empty subject id.");
  for (const keys of keyStoresOf(app)) if (await keys.isDestroyed(subject)) throw new SubjectErasedError(subject);
  const events = app.stores.events;
  const codec = app.effectRuntime.codec;
  const blobs = new Map<ContentAddress, ClaimCheckedBlob>();
  const executions: ExportedExecution[] = [];
  for (const info of await events.listExecutions()) {
    if (info.subject !== subject || isInternalLogic(info.logicId)) continue;
    const records = await app.log(info.executionId);
    const stored = await events.getSnapshot(info.executionId);
    const snapshot = stored && codec ? { ...stored, state: await codec.openState(info.executionId, stored.state, stored.seq) } : stored;
    executions.push({
      executionId: info.executionId,
      ...(info.logicId === undefined ? {} : { logicId: info.logicId }),
      status: info.status,
      startedAt: info.startedAt,
      ...(info.endedAt === undefined ? {} : { endedAt: info.endedAt }),
      records,
      ...(snapshot ? { snapshot } : {}),
    });
    visitCitedAddresses([records, snapshot?.state], (address, { envelope }) => {
      const blob = blobs.get(address) ?? { address, size: envelope?.size ?? 0, digest: envelope?.digest, citedBy: [] };
      if (blob.digest === undefined && envelope?.digest !== undefined) blob.digest = envelope.digest;
      if (!blob.citedBy.includes(info.executionId)) blob.citedBy.push(info.executionId);
      blobs.set(address, blob);
    });
  }
  const content = lifecycleContentOf(app);
  for (const blob of blobs.values()) {
    const bytes = content ? await content.get(blob.address, { subject }) : undefined;
    if (bytes === undefined) {
      blob.missing = true;
      continue;
    }
    if (blob.size === 0) blob.size = bytes.byteLength;
    try {
      blob.value = JSON.parse(fromUtf8(bytes));
    } catch {
      blob.bytesBase64 = toBase64(bytes);
    }
  }
  return { subject, executions, claimChecked: [...blobs.values()] };
}
