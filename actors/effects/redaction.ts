// Secret redaction (`security.redact`), the chain's layer outside the capability ring, installed by
// actors/effects/chain.ts when `security.redact` is set.
import type { RedactOption } from "../config.js";
import type { EffectMiddleware } from "./effect.js";
import { NonJsonOutputError } from "../errors.js";
import { plainJson } from "../journal/json.js";

/** The text scrubber for a `security.redact` option: every match becomes "[REDACTED]". */
export function redactor(option: RedactOption): (text: string) => string {
  if (typeof option === "function") return option;
  const patterns = option.map((p) =>
    typeof p === "string" ? p : new RegExp(p.source, p.flags.includes("g") ? p.flags : `${p.flags}g`),
  );
  return (text) =>
    patterns.reduce<string>(
      (t, p) => (typeof p === "string" ? (p === "" ? t : t.replaceAll(p, "[REDACTED]")) : t.replace(p, "[REDACTED]")),
      text,
    );
}

/**
 * Scrubs every string (keys included) of a result, deeply and as JSON would see it, before anything
 * outside it (the claim-check, the journal, any store) sees it; an error's message and string facts
 * are scrubbed in place. The layers inside it (the ring, user middleware) see the real result.
 */
export function redactionLayer(option: RedactOption): EffectMiddleware {
  const scrub = redactor(option);
  const walk = (value: unknown, ancestors: object[]): unknown => {
    if (typeof value === "string") return scrub(value);
    if (typeof value !== "object" || value === null || ancestors.includes(value)) return value;
    const toJSON = "toJSON" in value ? value.toJSON : undefined;
    if (typeof toJSON === "function") return walk(toJSON.call(value), ancestors);
    const inner = [...ancestors, value];
    if (Array.isArray(value)) return value.map((v) => walk(v, inner));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), walk(v, inner)]));
  };
  const scrubError = (error: unknown): unknown => {
    if (typeof error === "string") return scrub(error);
    if (!(error instanceof Error)) return walk(error, []);
    try {
      error.message = scrub(error.message);
      for (const [key, value] of Object.entries(error))
        if (typeof value === "string") Object.assign(error, { [key]: scrub(value) });
      if (typeof error.stack === "string") error.stack = scrub(error.stack);
    } catch {
      // A frozen error cannot be scrubbed in place: journal a plain copy instead.
      return Object.assign(new Error(scrub(error.message)), { name: error.name });
    }
    return error;
  };
  return async (ctx, input, next) => {
    let output: unknown;
    try {
      output = await next(input);
    } catch (error) {
      throw scrubError(error);
    }
    // Checked as the journal checks it first (a Map, NaN, a typed array refused with the path, never
    // turned into {} or null by the walk), then scrubbed: what the walk sees is plain JSON.
    return walk(
      plainJson(output, (reason) => new NonJsonOutputError(ctx.stepId, reason)),
      [],
    );
  };
}
