// The sentinel preset (the classic claim-check used for telemetry): the classic claim-check for a flow's own task steps,
// the second consumer of claimCheckMiddleware beside the agent preset. Telemetry is reclaimable: its
// envelopes carry no `retain`, so the sweep deletes the blobs once their TTL has passed.
import type { ContentStore } from "../../stores/types.js";
import { claimCheckMiddleware, CLASSIC_CLAIM_CHECK_CAP_BYTES } from "./claimCheck.js";
import type { EffectMiddleware } from "./effect.js";

/** Options of `sentinelClaimCheck`. */
export interface SentinelOptions {
  /** The content store the offloaded results are written to (usually `stores.content`). */
  store: ContentStore;
  /** Offload results whose JSON text is over this many UTF-8 bytes. @defaultValue 16 KiB (the classic cap) */
  capBytes?: number;
  /** Only these task effects; every task effect when omitted. */
  effectIds?: string[];
}

/**
 * Offloads large results of task effects (hand-written flow steps: snapshots of a page, crawl dumps,
 * traces) as TTL-reclaimable telemetry. Never touches a model or a tool.
 *
 * @example
 * execution: { effectMiddleware: [sentinelClaimCheck({ store: stores.content })] }
 */
export function sentinelClaimCheck(options: SentinelOptions): EffectMiddleware {
  const only = options.effectIds ? new Set(options.effectIds) : undefined;
  return claimCheckMiddleware({
    store: options.store,
    capBytes: options.capBytes ?? CLASSIC_CLAIM_CHECK_CAP_BYTES,
    retain: false,
    appliesTo: (ctx) => ctx.taskKind === "task" && (!only || only.has(ctx.effectId)),
  });
}
