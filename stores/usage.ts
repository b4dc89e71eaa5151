// A reply's token counts, as STEP_COMPLETED.usage journals them: read by the meter (actors/effects/meter.ts)
// and by the stored form, which leaves out a model step's usage where it is its output's (recordFormat.ts).

/** A reply's usage when it is well-formed (two non-negative numbers), else undefined. */
export function usageOf(reply: unknown): { inputTokens: number; outputTokens: number } | undefined {
  const usage = typeof reply === "object" && reply !== null && "usage" in reply ? reply.usage : undefined;
  if (!usage || typeof usage !== "object") return undefined;
  const inputTokens = "inputTokens" in usage ? usage.inputTokens : undefined;
  const outputTokens = "outputTokens" in usage ? usage.outputTokens : undefined;
  const ok = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;
  return ok(inputTokens) && ok(outputTokens) ? { inputTokens, outputTokens } : undefined;
}
