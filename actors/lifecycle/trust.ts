// Which recorded steps may vouch for a claim-checked blob (the writer check of actors/lifecycle/citations.ts),
// apart from the content walker: the app derives it from its config when it is built, and only the
// walker's users (the sweep, erasure, export) need the walker.
import { AGENT_TOOL_STEP } from "../../machines/helpers/agentIds.js";
import type { LoomConfig } from "../config.js";

/**
 * Which recorded steps the claim-check could have written an envelope for, by the step's readable
 * effect id and step id. Trust needs the position AND this; without it, the position alone.
 */
export type ClaimCheckTrust = (effectId: string, stepId: string) => boolean;

/**
 * The writer check for an app's config: with `execution.claimCheck`, a listed tool's step vouches only in
 * an agent tool frame (where the preset runs, ADR 0140 D9), and a registered effect that is not listed
 * (an unlisted tool, the model) never does. An effect the config does not register (renamed or removed
 * since) still does: its history cannot be re-judged, so it is kept (over-retain, never lose).
 * Without `execution.claimCheck` there is no preset to vouch for: undefined (position only).
 */
export function claimCheckTrustOf(config: Pick<LoomConfig, "effects" | "execution">): ClaimCheckTrust | undefined {
  const toolIds = config.execution?.claimCheck?.toolIds;
  if (!toolIds) return undefined;
  const listed = new Set(toolIds);
  const registered = new Set(Object.keys(config.effects ?? {}));
  return (effectId, stepId) => (listed.has(effectId) ? AGENT_TOOL_STEP.test(stepId) : !registered.has(effectId));
}
