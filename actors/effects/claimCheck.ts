// The claim-check (the classic middleware, and the ADR 0140 preset built on it): a large effect result goes to the content store and
// the journal records a small envelope { __loomClaimCheck, ref, size, digest?, retain? } in its place.
import { fromUtf8, utf8, utf8Length } from "../../stores/bytes.js";
import { LoomworkError } from "../../stores/errors.js";
import type { ContentStore, KeyStore } from "../../stores/types.js";
import {
  isTainted,
  TAINT_KEY,
  TAINT_SCAN_INCOMPLETE,
  TAINT_SCAN_MAX_NODES,
  taintOrigins,
  tainted,
  UNSCANNED_TAINT_ORIGIN,
} from "../../machines/helpers/taint.js";
import type { Warning } from "../bus.js";
import type { EffectContext, EffectMiddleware } from "./effect.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { NonJsonOutputError } from "../errors.js";
import { plainJson } from "../journal/json.js";
import { CLAIM_CHECK_KEY, CONTENT_REF_KEY } from "../../machines/helpers/constants.js";
import { AGENT_TOOL_STEP } from "../../machines/helpers/agentIds.js";

export { AGENT_TOOL_STEP, CLAIM_CHECK_KEY, CONTENT_REF_KEY };
/** The classic middleware's cap: 16 KiB of UTF-8 JSON text. */
export const CLASSIC_CLAIM_CHECK_CAP_BYTES = 16 * 1024;
/** The execution.claimCheck preset's cap: 1 KiB (ADR 0140 D4, the measured figure). */
export const DEFAULT_CLAIM_CHECK_CAP_BYTES = 1024;
/** Characters of the result's JSON text the preset's default digest keeps (ADR 0140 D3). */
export const DEFAULT_CLAIM_CHECK_PREVIEW_CHARS = 256;

/** What the journal records instead of an offloaded result. Plain JSON. */
export interface ClaimCheckEnvelope {
  [CLAIM_CHECK_KEY]: 1;
  ref: { [CONTENT_REF_KEY]: string };
  /** UTF-8 bytes of the offloaded JSON text. */
  size: number;
  digest?: unknown;
  /** Load-bearing: the blob is the only copy of a fact the log once held; only erasure may delete it (ADR 0140 D6). */
  retain?: true;
}

/** The default digest's shape: a head of the JSON text, marked when it is not the whole. */
export interface PreviewDigest {
  preview: string;
  truncated?: true;
}

/** A pure, deterministic digest of an offloaded value, kept in its envelope for the model. */
export type Digest = (value: unknown) => unknown;

/** Options of `claimCheckMiddleware` (the classic claim-check: any result over the cap, from any effect it wraps). */
export interface ClaimCheckOptions {
  /** The content store the offloaded results are written to (usually `stores.content`). */
  store: ContentStore;
  /** Offload results whose JSON text is over this many UTF-8 bytes. @defaultValue 16 KiB */
  capBytes?: number;
  /** Per effect id: a pure, deterministic digest kept in the envelope; replaces the default digest. */
  digests?: Record<string, Digest>;
  /** The digest for effects without a declared one (never applied to a tainted result). */
  defaultDigest?: Digest;
  /** Mark envelopes load-bearing (the preset's default); false for telemetry. */
  retain?: boolean | ((ctx: EffectContext) => boolean);
  /** Which calls the middleware may touch at all. @defaultValue every call */
  appliesTo?: (ctx: EffectContext) => boolean;
  /** A result that already contains an envelope is data: it is offloaded whole (ADR 0140 D9, D11 (1)). */
  envelopesAreData?: boolean;
  /** Effect ids whose results pass through untouched (e.g. media). */
  passThrough?: (ctx: EffectContext) => boolean;
  /** Called after an offload; a throw is reported through `onError`, never failing the call (ADR 0140 L). */
  onOffload?: (event: { ctx: EffectContext; envelope: ClaimCheckEnvelope; size: number }) => void;
  /** Receives what `onOffload` threw; the call itself never fails for it. */
  onError?: (error: unknown, ctx: EffectContext) => void;
  /** Reports what never fails the call: a result too large to scan whole for taint (recorded as tainted). */
  onWarn?: (warning: Warning, ctx: EffectContext) => void;
}

const TAINT_NEEDLE = `"${TAINT_KEY}":`;

/** True once the step's signal was aborted: its outcome will not be journaled (actors/effects/chain.ts). */
const abandoned = (ctx: EffectContext): boolean => ctx.signal?.aborted === true;

/** True for an envelope (not looking through taint). */
export function isClaimCheckEnvelope(value: unknown): value is ClaimCheckEnvelope {
  if (typeof value !== "object" || value === null || !(CLAIM_CHECK_KEY in value) || !("ref" in value)) return false;
  const ref = value.ref;
  return typeof ref === "object" && ref !== null && CONTENT_REF_KEY in ref && typeof ref[CONTENT_REF_KEY] === "string";
}

/**
 * The preset's default digest: the first `maxChars` characters (Unicode code points, so an emoji is never
 * cut in half) of the result's JSON text.
 *
 * @example
 * previewDigest(256)({ rows: [...] }) // { preview: '{"rows":[...', truncated: true }
 */
export function previewDigest(maxChars: number = DEFAULT_CLAIM_CHECK_PREVIEW_CHARS): Digest {
  if (!(Number.isInteger(maxChars) && maxChars > 0))
    throw new TypeError("previewDigest(maxChars): a positive integer number of characters.");
  return (value) => {
    const text = JSON.stringify(value) ?? "null";
    const end = codePointOffset(text, maxChars);
    return end >= text.length ? { preview: text } : { preview: text.slice(0, end), truncated: true };
  };
}

/** The UTF-16 offset just past the first `count` code points of `text` (its length when it has fewer). */
function codePointOffset(text: string, count: number): number {
  let offset = 0;
  for (let n = 0; n < count && offset < text.length; n++) offset += (text.codePointAt(offset) ?? 0) > 0xffff ? 2 : 1;
  return offset;
}

/**
 * The classic claim-check middleware: offloads any result over the cap. It runs on EVERY call it
 * is given, the model's included; agents should use the `execution.claimCheck` preset, which lists tools.
 */
export function claimCheckMiddleware(options: ClaimCheckOptions): EffectMiddleware {
  const cap = options.capBytes ?? CLASSIC_CLAIM_CHECK_CAP_BYTES;
  return async (ctx, input, next) => {
    const output = await next(input);
    if (output === undefined || (options.appliesTo && !options.appliesTo(ctx)) || options.passThrough?.(ctx))
      return output;
    // A result that arrives after its step was abandoned (app.stop, eraseSubject, its state left) is discarded
    // by the runtime: nothing of it is put, since no record would ever cite the blob.
    if (abandoned(ctx)) return output;
    // A value JSON cannot carry fails the step here, as it would when journaled: never dropped silently.
    const plain = plainJson(output, (reason) => new NonJsonOutputError(ctx.stepId, reason));
    if (plain === undefined) return output;
    const text = JSON.stringify(plain);
    const size = utf8Length(text);
    // A result that nests anything envelope-shaped is offloaded whole, so the log never holds a lookalike.
    const lookalike = options.envelopesAreData === true && text.includes(CLAIM_CHECK_KEY);
    if (size <= cap && !lookalike) return output;

    const address = await options.store.put(utf8(text), ctx.subject === undefined ? {} : { subject: ctx.subject });
    // Abandoned while the blob was being written: not reported as an offload (no sweep spares it as in flight),
    // so the next sweep reclaims it; its address may be another record's too, so it is not deleted here.
    if (abandoned(ctx)) return output;
    // Without the marker's key in the JSON text there is no marker anywhere; with it, a walk that runs out of
    // budget fails closed (UNSCANNED_TAINT_ORIGIN), so the result is never previewed (ADR 0140 D3, D10).
    const origins = text.includes(TAINT_NEEDLE) ? taintOrigins(plain) : [];
    if (origins.includes(UNSCANNED_TAINT_ORIGIN)) {
      options.onWarn?.(
        {
          code: TAINT_SCAN_INCOMPLETE,
          message:
            `Step "${ctx.stepId}": its result holds a taint marker and was too large to scan whole (over ${TAINT_SCAN_MAX_NODES} nodes), ` +
            `so it is recorded as tainted (origin "${UNSCANNED_TAINT_ORIGIN}") and not previewed.`,
          executionId: ctx.executionId,
          stepId: ctx.stepId,
        },
        ctx,
      );
    }
    const declared = options.digests?.[ctx.effectId];
    // A digest is prompt text: previewing untrusted content would launder its taint (ADR 0140 D3).
    const digest = declared
      ? declared(output)
      : origins.length === 0 && options.defaultDigest
        ? options.defaultDigest(output)
        : undefined;
    const retain = typeof options.retain === "function" ? options.retain(ctx) : options.retain === true;
    const envelope: ClaimCheckEnvelope = {
      [CLAIM_CHECK_KEY]: 1,
      ref: { [CONTENT_REF_KEY]: address },
      size,
      ...(digest === undefined ? {} : { digest }),
    };
    if (retain) envelope.retain = true;
    if (options.onOffload) {
      try {
        options.onOffload({ ctx, envelope, size });
      } catch (error) {
        options.onError?.(error, ctx);
      }
    }
    // The taint is carried by the envelope (ADR 0140 D10): top-level origin first, else the first nested one
    // (the generic origin when the walk could not finish: a marker past the bound may come first).
    if (origins.length === 0) return envelope;
    const origin = isTainted(output)
      ? output[TAINT_KEY]
      : origins.includes(UNSCANNED_TAINT_ORIGIN)
        ? UNSCANNED_TAINT_ORIGIN
        : origins[0]!;
    return tainted(envelope, origin);
  };
}

/**
 * A retained envelope's blob (`retain: true`, ADR 0140 D6) is not in the content store. Such a blob is the
 * only copy of a result the journal once held and nothing reclaims it but erasure, so its absence is damage,
 * never the "reclaimed" a telemetry ref's `null` means.
 */
export class RetainedContentMissingError extends LoomworkError {
  static override readonly name: string = "RetainedContentMissingError";
  /** The content address the envelope cites. */
  readonly address: string;
  /** The subject it was resolved for, if one was given. */
  readonly subject: string | undefined;
  constructor(address: string, subject: string | undefined) {
    super(
      RUNTIME_ERROR_CODES.retainedContentMissing,
      `The blob ${address} of a retained claim-check envelope (retain: true) is not in the content store` +
        `${subject === undefined ? "" : ` (subject "${subject}", not erased)`}. A retained blob is the only copy of a result the journal ` +
        `once held and only erasure may delete it (ADR 0140 D6), so this is damage: a content store restored without its blobs, ` +
        `a delete made outside loomwork, or another store than the one execution.claimCheck writes to. Restore the blob from a ` +
        `backup of the content store, or resolve against the store the envelope was written to.`,
    );
    this.address = address;
    this.subject = subject;
  }
}

/** Options of `resolveClaimCheck`. */
export interface ResolveClaimCheckOptions {
  /** The store the envelope was written to (execution.claimCheck.store). */
  store: ContentStore;
  /** The subject the blob belongs to: sealing stores need it. */
  subject?: string;
  /** Where `subject`'s erasure is recorded: a retained blob missing for an erased subject resolves null (erasure deleted it). */
  keys?: KeyStore | readonly KeyStore[];
}

/**
 * The value an envelope stands for, or null once its blob was reclaimed: a telemetry ref (no `retain`) past
 * its TTL, or a blob of a subject that `keys` says was erased. A RETAINED envelope whose blob is missing
 * otherwise rejects with `RetainedContentMissingError` (ADR 0140 D6: nothing reclaims it but erasure).
 *
 * @example
 * const rows = await resolveClaimCheck(record.output, { store, subject: "user-42", keys });
 */
export async function resolveClaimCheck(envelope: unknown, options: ResolveClaimCheckOptions): Promise<unknown> {
  const inner = isTainted(envelope) ? envelope.value : envelope;
  if (!isClaimCheckEnvelope(inner))
    throw new TypeError("resolveClaimCheck: not a claim-check envelope { __loomClaimCheck, ref, size }.");
  const { subject } = options;
  const address = inner.ref[CONTENT_REF_KEY];
  const bytes = await options.store.get(address, subject === undefined ? {} : { subject });
  if (bytes !== undefined) return JSON.parse(fromUtf8(bytes));
  if (inner.retain !== true) return null;
  const keys: KeyStore[] = [options.keys ?? []].flat();
  if (subject !== undefined && (await Promise.all(keys.map((k) => k.isDestroyed(subject)))).some(Boolean)) return null;
  throw new RetainedContentMissingError(address, subject);
}
