// execution.claimCheck's shape and its validation at boot (ADR 0140 D1, D2, D8), apart from the layer it
// builds (./claimCheckPreset.ts): createApp validates the whole config synchronously at its start, and the
// validation needs the shape, not the layer.
import { ConfigError } from "../errors.js";
import type { ContentStore } from "../../stores/types.js";
import type { ClaimCheckEnvelope, Digest } from "./claimCheck.js";
import type { Effect, EffectContext } from "./effect.js";

/** The `execution.claimCheck` opt-in (ADR 0140). */
export interface ClaimCheckConfig {
  /** Where offloaded results go: the same store you hand the sweep. */
  store: ContentStore;
  /** The tools to offload, by effect id. Required: the model and the summarizer must never be offloaded (D2). */
  toolIds: string[];
  /** Results whose JSON text is over this many UTF-8 bytes are offloaded. @defaultValue 1024 */
  inlineCapBytes?: number;
  /**
   * Per tool: a pure digest kept in the envelope for the model to read; it replaces the preview. Keep it
   * taint-free: a digest is prompt text.
   */
  digests?: Record<string, Digest>;
  /** Characters (code points) of the JSON text kept as `{ preview }`, or false for `{ ref, size }` only. @defaultValue 256 */
  preview?: number | false;
  /** Called after each offload; a throw is reported through onWarn, never failing the call. */
  onOffload?: (event: { ctx: EffectContext; envelope: ClaimCheckEnvelope; size: number }) => void;
  /**
   * Telemetry: these tools' envelopes carry no `retain`, so the sweep reclaims their blobs after the TTL and
   * resolveClaimCheck then returns null (an explicit audit trade). `true` for every listed tool.
   */
  reclaimable?: true | string[];
}

const KNOWN = ["store", "toolIds", "inlineCapBytes", "digests", "preview", "onOffload", "reclaimable"];

/** Refuses a bad claim-check config at boot, naming the option (ADR 0140 D1, D2, D8). */
export function validateClaimCheck(
  config: unknown,
  effects: Record<string, Effect>,
  hasCrypto: boolean,
): asserts config is ClaimCheckConfig {
  function fail(path: string, message: string): never {
    throw new ConfigError(`execution.claimCheck${path}`, message);
  }
  if (typeof config !== "object" || config === null)
    fail("", "{ store, toolIds, inlineCapBytes?, digests?, preview?, onOffload?, reclaimable? }.");
  const option = (key: string): unknown => Reflect.get(config, key);
  for (const key of Object.keys(config))
    if (!KNOWN.includes(key)) fail(`.${key}`, `unknown option. Known: ${KNOWN.join(", ")}.`);
  const store = option("store");
  if (!isStoreLike(store)) fail(".store", "a ContentStore (e.g. stores.content): the same object you hand the sweep.");
  const toolIds = option("toolIds");
  if (!isIdList(toolIds) || toolIds.length === 0) {
    fail(
      ".toolIds",
      'required: a non-empty list of tool effect ids, e.g. ["export"]. There is no "all": the model and the summarizer must never be offloaded (ADR 0140 D2).',
    );
  }
  for (const id of toolIds) {
    const effect = effects[id];
    if (!effect)
      fail(".toolIds", `"${id}" is not a registered effect (registered: ${Object.keys(effects).join(", ")}).`);
    if (effect.kind === "llm")
      fail(
        ".toolIds",
        `"${id}" is an llm effect: listing a model or summarizer would hand the loop an envelope where it reads content (ADR 0140 D2/D9).`,
      );
  }
  const cap = option("inlineCapBytes");
  if (cap !== undefined && !(typeof cap === "number" && Number.isInteger(cap) && cap >= 0))
    fail(".inlineCapBytes", "a whole number of bytes.");
  const preview = option("preview");
  if (
    preview !== undefined &&
    preview !== false &&
    !(typeof preview === "number" && Number.isInteger(preview) && preview > 0)
  ) {
    fail(".preview", "a positive number of characters, or false.");
  }
  const digests = option("digests");
  if (digests !== undefined) {
    if (typeof digests !== "object" || digests === null) fail(".digests", "an object of tool id -> (value) => digest.");
    for (const [id, fn] of Object.entries(digests)) {
      if (typeof fn !== "function") fail(`.digests.${id}`, "a pure function (value) => digest.");
      if (!toolIds.includes(id)) fail(`.digests.${id}`, `"${id}" is not in toolIds.`);
    }
  }
  const onOffload = option("onOffload");
  if (onOffload !== undefined && typeof onOffload !== "function") fail(".onOffload", "a function.");
  const r = option("reclaimable");
  if (r !== undefined && r !== true && !(Array.isArray(r) && r.every((id) => toolIds.includes(id)))) {
    fail(".reclaimable", "true, or a list of ids from toolIds.");
  }
  if (hasCrypto && Reflect.get(store, "sealsContent") !== true) {
    throw new TypeError(
      "execution.claimCheck with security.crypto needs a content store that seals each blob under its subject's key " +
        "(sealsContent: true), e.g. new EncryptingContentStore(stores.content, stores.keys): an offloaded tool output " +
        "is subject data outside the per-subject keys that seal the log (ADR 0140 D8).",
    );
  }
}

/** A content store as far as boot can tell: something with `put` and `get` functions. */
function isStoreLike(value: unknown): value is object {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  return typeof Reflect.get(value, "put") === "function" && typeof Reflect.get(value, "get") === "function";
}

/** A list of non-empty strings. */
function isIdList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((id) => typeof id === "string" && id !== "");
}
