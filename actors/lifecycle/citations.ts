// The content walker: which content addresses a journal cites, and which of those citations are
// load-bearing (ADR 0140 D6, D11 (2)(3)). The sweep, erasure, export and record sealing all use it;
// which envelopes are trusted is one rule, `trustedEnvelopeOf`.
//
// Trust is by POSITION, never by a flag alone: `retain: true` is plain JSON any tool can return, so it
// is honoured only on the envelope at the top level of a recorded STEP_COMPLETED output (through one
// taint wrapper), exactly where the execution.claimCheck preset writes it. A nested lookalike is an
// ordinary, TTL-reclaimable citation. Archive segments and snapshots pin everything they cite.
// The position alone would still trust a lookalike an UNLISTED tool returns at the top of its output
// (the middleware never sees that tool), so an app that knows its claim-check config also checks the
// writer (`claimCheckTrustOf`): a step whose effect the claim-check never touches vouches for nothing.
//
// A sealed record (security.crypto) keeps its cited addresses readable as `refs`, computed by this
// walker before sealing. Without the key a walker cannot see WHERE in the payload an address sat, so
// it fails closed: a sealed record's refs count as load-bearing and as trusted.
import { isTainted } from "../../machines/helpers/taint.js";
import { STEP_COMPLETED } from "../../stores/schema.js";
import type { StoredRecord } from "../../stores/types.js";
import { CONTENT_REF_KEY, isClaimCheckEnvelope, type ClaimCheckEnvelope } from "../effects/claimCheck.js";
import { SNAPSHOT_RECORD_TYPE } from "../constants.js";
import { claimCheckTrustOf, type ClaimCheckTrust } from "./trust.js";

export { claimCheckTrustOf, type ClaimCheckTrust };

function vouches(record: StoredRecord | SealedPayload, trust: ClaimCheckTrust | undefined): boolean {
  return !trust || trust(String(record.effectId), String(record.stepId));
}

/** What the walker knows about one citation. */
export interface Citation {
  /** The envelope that holds the ref, when the ref sits in one (a bare `{ __loomContent }` has none). */
  envelope?: ClaimCheckEnvelope;
  /** True when the citation pins its blob however old (a retained envelope at a trusted position, or a sealed record's refs). */
  loadBearing: boolean;
}

/** Options of `visitCitedAddresses`. */
export interface VisitOptions {
  /** Envelopes (by identity) whose `retain: true` is honoured; from `retainRootsOf`. Without it no `retain` is honoured. */
  retainRoots?: ReadonlySet<object>;
  /** Every citation is load-bearing (archive segments and snapshots pin everything they cite). */
  pinAll?: boolean;
  /** The writer check for sealed STEP_COMPLETED records (see `claimCheckTrustOf`). */
  trust?: ClaimCheckTrust;
}

/**
 * True for a sealed record or sealed snapshot state: an object with a `sealed` string. Only checked where
 * a record or a state sits (the value walked, or an element of a walked array of records), never inside
 * data, so a tool output that happens to hold a `sealed` field is walked like any JSON.
 */
export function hasSealedPayload(value: unknown): value is SealedPayload {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    "sealed" in value &&
    typeof value.sealed === "string"
  );
}

/** What the walker reads of a sealed record or state without the key: `sealed`, `refs`, and its readable header. */
export interface SealedPayload {
  sealed: string;
  refs?: unknown;
  [field: string]: unknown;
}

/** The readable refs of a sealed payload, or undefined when the sealer did not list them (then it may cite anything). */
export function sealedRefsOf(value: { refs?: unknown }): string[] | undefined {
  const refs = value.refs;
  return Array.isArray(refs) && refs.every((r) => typeof r === "string") ? refs : undefined;
}

/**
 * Calls `visit` for every content address a JSON value cites: each claim-check envelope's ref and every
 * bare `{ __loomContent }` ref, at any depth, taint wrappers included. A sealed record or state (the value
 * itself, or an element of an array of records) contributes its readable `refs`: load-bearing for a sealed
 * state or STEP_COMPLETED (without the key their position is unknown), ordinary for any other record type
 * (only a STEP_COMPLETED output can hold a retained envelope). Iterative, so a deeply nested tool output
 * cannot overflow the stack.
 *
 * @example
 * visitCitedAddresses(records, (address, { loadBearing }) => (loadBearing ? pinned : cited).add(address), { retainRoots: retainRootsOf(records) });
 */
export function visitCitedAddresses(
  value: unknown,
  visit: (address: string, citation: Citation) => void,
  options: VisitOptions = {},
): void {
  const stack: unknown[] = [];
  for (const root of Array.isArray(value) ? value : [value]) {
    if (hasSealedPayload(root)) {
      const type = root.type;
      // Only a STEP_COMPLETED output can hold a retained envelope; a sealed state may hold anything.
      const otherRecord = typeof type === "string" && type !== STEP_COMPLETED && type !== SNAPSHOT_RECORD_TYPE;
      const loadBearing =
        options.pinAll === true || (type === STEP_COMPLETED ? vouches(root, options.trust) : !otherRecord);
      for (const address of sealedRefsOf(root) ?? []) visit(address, { loadBearing });
    } else stack.push(root);
  }
  stack.reverse();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (isClaimCheckEnvelope(node)) {
      const loadBearing = options.pinAll === true || (node.retain === true && options.retainRoots?.has(node) === true);
      visit(node.ref[CONTENT_REF_KEY], { envelope: node, loadBearing });
      // The ref is reported; the rest of the envelope (a digest) may still hold refs of its own.
      for (const [key, child] of Object.entries(node)) if (key !== "ref") stack.push(child);
      continue;
    }
    const ref = Array.isArray(node) || !(CONTENT_REF_KEY in node) ? undefined : node[CONTENT_REF_KEY];
    if (typeof ref === "string") {
      visit(ref, { loadBearing: options.pinAll === true });
      continue;
    }
    const children = Array.isArray(node) ? node : Object.values(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
}

/** Which recorded envelopes vouch for their blobs (ADR 0140 D11, ADR 0004). */
export interface TrustOptions {
  /** From `claimCheckTrustOf(config)`; omitted, any step at the trusted position vouches (the conservative walker's default). */
  trust?: ClaimCheckTrust;
}

/**
 * The envelope at the trusted position of a record (ADR 0140 D11): the top level of an unsealed
 * STEP_COMPLETED output, through one taint wrapper, of a step the `trust` check accepts. The one rule
 * the sweep (`retainRootsOf`), erasure (`trustedClaimCheckRefsOf`) and export apply; any other
 * envelope-shaped value is data.
 */
export function trustedEnvelopeOf(record: StoredRecord, trust?: ClaimCheckTrust): ClaimCheckEnvelope | undefined {
  if (record.type !== STEP_COMPLETED || hasSealedPayload(record) || !vouches(record, trust)) return undefined;
  const output = isTainted(record.output) ? record.output.value : record.output;
  return isClaimCheckEnvelope(output) ? output : undefined;
}

/**
 * The envelopes (by identity) whose `retain: true` is load-bearing: only those at the top level of a
 * recorded STEP_COMPLETED output, through one taint wrapper (ADR 0140 D11 (2)), of a step the `trust`
 * check accepts. Pass the result to `visitCitedAddresses` as `retainRoots`.
 */
export function retainRootsOf(records: Iterable<StoredRecord>, options: TrustOptions = {}): Set<ClaimCheckEnvelope> {
  const roots = new Set<ClaimCheckEnvelope>();
  for (const record of records) {
    const envelope = trustedEnvelopeOf(record, options.trust);
    if (envelope?.retain === true) roots.add(envelope);
  }
  return roots;
}

/**
 * The addresses a history cites at the trusted position only (ADR 0140 D11 (3)): what erasure counts as
 * "another execution still cites this blob". A sealed record's refs count (fail closed: open it first
 * to be precise).
 */
export function trustedClaimCheckRefsOf(records: Iterable<StoredRecord>, options: TrustOptions = {}): Set<string> {
  const refs = new Set<string>();
  for (const record of records) {
    if (hasSealedPayload(record)) {
      if (record.type === STEP_COMPLETED && vouches(record, options.trust))
        for (const address of sealedRefsOf(record) ?? []) refs.add(address);
      continue;
    }
    const envelope = trustedEnvelopeOf(record, options.trust);
    if (envelope) refs.add(envelope.ref[CONTENT_REF_KEY]);
  }
  return refs;
}

/** Every address a value (records, a snapshot's state) cites, wherever it sits: the broad collection. */
export function claimCheckRefsOf(value: unknown): Set<string> {
  const refs = new Set<string>();
  visitCitedAddresses(value, (address) => refs.add(address));
  return refs;
}

/** True when a value (or an element of an array of records) is sealed without listing its refs: a fail-closed walker must assume it cites anything. */
export function citesUnknown(value: unknown): boolean {
  return (Array.isArray(value) ? value : [value]).some(
    (root) => hasSealedPayload(root) && sealedRefsOf(root) === undefined,
  );
}
