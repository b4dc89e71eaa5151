// The code of the runtime's internal effects (the sweep's, the erasure's and the retention's steps), by id: loaded by
// actors/lifecycle/maintenance.ts on the first internal step, which lists their ids (INTERNAL_EFFECT_IDS).
import { eraseEffects } from "./erase.js";
import type { InternalEffect } from "./host.js";
import { sweepEffects } from "./sweep.js";
import { retentionEffects } from "./expiry.js";

/** Every internal effect, by id. */
export const INTERNAL_EFFECTS: Readonly<Record<string, InternalEffect>> = Object.freeze({
  ...sweepEffects,
  ...eraseEffects,
  ...retentionEffects,
});
