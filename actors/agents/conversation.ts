// conversation$: a journaled multi-session chat with a rolling summary under a byte budget.
import { createConversationMachine } from "../../machines/conversation.js";
import { ConfigError } from "../errors.js";

/** Options of `conversation$`. */
export interface ConversationConfig {
  /** The machine's id, non-empty: the logic id its executions are journaled under. */
  id: string;
  /** The registered llm effect that answers. */
  model: string;
  /** The system prompt: the first message of the transcript. */
  system?: string;
  /** Fold older messages into a summary by `summarizerToolId` once the transcript exceeds `maxBytes`. */
  budget: { summarizerToolId: string; maxBytes: number };
}

/**
 * A conversation machine: send `{ type: "USER_MESSAGE", text }`, `{ type: "NEW_SESSION" }`, `{ type: "END" }`.
 *
 * @example
 * const chat = conversation$({ id: "support", model: "model", budget: { summarizerToolId: "summarize", maxBytes: 32_768 } });
 */
export function conversation$(config: ConversationConfig) {
  if (typeof config?.id !== "string" || config.id === "") throw new ConfigError("conversation$.id", "a non-empty id.");
  if (typeof config.model !== "string" || config.model === "")
    throw new ConfigError("conversation$.model", "the name of a registered llm effect.");
  if (typeof config.budget?.summarizerToolId !== "string" || !(config.budget.maxBytes > 0)) {
    throw new ConfigError(
      "conversation$.budget",
      "{ summarizerToolId: a registered summarizer effect, maxBytes: a positive number }.",
    );
  }
  return createConversationMachine(config);
}
