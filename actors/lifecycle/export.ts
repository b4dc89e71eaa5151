// exportSubject (ADR 0140 D8, the Art. 15/20 export): every execution of a subject with its records opened,
// and every blob the claim-check offloaded for them resolved, so the export is the data and not just refs.
//
// Only envelopes at the trusted position (ADR 0140 D11, `trustedEnvelopeOf`: the rule the sweep and
// erasure apply) are resolved. Any other citation (an envelope-shaped value inside a tool's own output,
// a bare `{ __loomContent }`, or one only a snapshot holds) is data the tool returned: it is listed in
// `unresolved` and never read, so a forged ref cannot pull another subject's blob into this export.
import { fromUtf8, toBase64 } from "../../stores/bytes.js";
import { SubjectErasedError } from "../../stores/errors.js";
import type { ContentAddress, ExecutionStatus, JournalRecord, StoredSnapshot } from "../../stores/types.js";
import { trustedEnvelopeOf, visitCitedAddresses } from "./citations.js";
import { CONTENT_REF_KEY } from "../effects/claimCheck.js";
import { ConfigError } from "../errors.js";
import { isInternalLogic, type LifecycleHost } from "./host.js";

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

/** A content address the subject's records cite somewhere the claim-check never writes: data, not resolved. */
export interface UnresolvedCitation {
  address: ContentAddress;
  /** The executions whose records or snapshot cite it. */
  citedBy: string[];
}

/** What `exportSubject` returns. */
export interface SubjectExport {
  subject: string;
  executions: ExportedExecution[];
  /** The blobs the claim-check offloaded for the subject's executions (envelopes at the trusted position), resolved. */
  claimChecked: ClaimCheckedBlob[];
  /**
   * Addresses cited anywhere else (inside a tool's own output, a bare `{ __loomContent }`, a snapshot only):
   * what a tool returned, kept as data in `records`; never read from the content store.
   */
  unresolved: UnresolvedCitation[];
}

/** The subject's data from the host's stores; rejects with SubjectErasedError once the subject was erased. */
export async function exportFrom(host: LifecycleHost, subject: string): Promise<SubjectExport> {
  if (typeof subject !== "string" || subject === "")
    throw new ConfigError("exportSubject.subject", "a non-empty subject id.");
  for (const keys of host.keyStores) if (await keys.isDestroyed(subject)) throw new SubjectErasedError(subject);
  const { events, codec, trust } = host;
  const blobs = new Map<ContentAddress, ClaimCheckedBlob>();
  const others = new Map<ContentAddress, UnresolvedCitation>();
  const executions: ExportedExecution[] = [];
  for (const info of await events.listExecutions()) {
    if (info.subject !== subject || isInternalLogic(info.logicId)) continue;
    const records = await host.log(info.executionId);
    const stored = await events.getSnapshot(info.executionId);
    const snapshot =
      stored && codec
        ? { ...stored, state: await codec.openState(info.executionId, stored.state, stored.seq) }
        : stored;
    executions.push({
      executionId: info.executionId,
      ...(info.logicId === undefined ? {} : { logicId: info.logicId }),
      status: info.status,
      startedAt: info.startedAt,
      ...(info.endedAt === undefined ? {} : { endedAt: info.endedAt }),
      records,
      ...(snapshot ? { snapshot } : {}),
    });
    for (const record of records) {
      const envelope = trustedEnvelopeOf(record, trust);
      if (!envelope) continue;
      const address = envelope.ref[CONTENT_REF_KEY];
      const blob = blobs.get(address) ?? { address, size: envelope.size ?? 0, digest: envelope.digest, citedBy: [] };
      if (blob.digest === undefined && envelope.digest !== undefined) blob.digest = envelope.digest;
      citedBy(blob, info.executionId);
      blobs.set(address, blob);
    }
    visitCitedAddresses([records, snapshot?.state], (address) => {
      const other = others.get(address) ?? { address, citedBy: [] };
      citedBy(other, info.executionId);
      others.set(address, other);
    });
  }
  const unresolved = [...others.values()].filter((citation) => !blobs.has(citation.address));
  const { content } = host;
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
  return { subject, executions, claimChecked: [...blobs.values()], unresolved };
}

function citedBy(entry: { citedBy: string[] }, executionId: string): void {
  if (!entry.citedBy.includes(executionId)) entry.citedBy.push(executionId);
}
