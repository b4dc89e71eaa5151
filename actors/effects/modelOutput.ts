// A tool's `toModelOutput` (the AI SDK's projection of a tool result for the model), applied where a model
// request is built: the journal keeps the tool's output, the model reads the projection. A resumed run
// serves the journaled output and builds the same projection from it. Never journaled.
import type { Message, ToolModelOutput } from "../../machines/helpers/messages.js";
import { fence, isTainted, journaledMessageOf, taintOrigins, tainted } from "../../machines/helpers/taint.js";
import { isEnvelope, isErrorResult } from "../../machines/helpers/transcript.js";
import { isObject } from "../../stores/shapes.js";

/** What a tool's `toModelOutput` is called with, as the AI SDK 6 and 7 call it. */
export interface ToolModelOutputOptions<I = unknown, O = unknown> {
  /** The model's id of the tool call. */
  toolCallId: string;
  /** The call's input, as the model gave it. */
  input: I;
  /** The tool's result as journaled (a taint marker the runtime added around it removed). */
  output: O;
}

/**
 * A tool message with its result replaced by the tool's projection (`modelOutput`, and `content` its plain
 * reading). Left as it is: an error result (the AI SDK does not project those either), a claim-check
 * envelope, and a message whose journaled original is not known (a middleware copied the request): the
 * model then reads the fenced output, as without a projection.
 */
export async function projectedMessage(
  message: Message,
  messages: readonly Message[],
  project: (options: ToolModelOutputOptions) => unknown,
): Promise<Message> {
  const journaled = journaledMessageOf(message);
  const raw = journaled.content;
  if (journaled === message && taintOrigins(raw).length === 0 && mayBeFenced(raw)) return message;
  if (isErrorResult(raw) || isEnvelope(raw)) return message;
  // The tool's own value: the taint marker the runtime put around it is not the tool's.
  const output = isTainted(raw) ? raw.value : raw;
  const toolCallId = message.toolCallId ?? "";
  const input = messages.flatMap((m) => m.toolCalls ?? []).find((call) => call.id === toolCallId)?.input;
  const projection = normalized(await project({ toolCallId, input, output }));
  // Fails closed: a projection of anything tainted is fenced under the output's origins, whatever it kept.
  const origins = taintOrigins(raw);
  const modelOutput = origins.length ? fencedOutput(projection, origins.join(",")) : projection;
  return { ...message, content: plainReadingOf(modelOutput), modelOutput };
}

// A copy of a fenced message no longer maps to its original; its content holds the fence's text.
function mayBeFenced(content: unknown): boolean {
  return (JSON.stringify(content) ?? "").includes("<untrusted-data");
}

const FORMS = new Set(["text", "json", "error-text", "error-json", "content"]);

// What toModelOutput returned, in one of the AI SDK's forms: anything else is read as a JSON value.
function normalized(value: unknown): ToolModelOutput {
  if (isObject(value) && typeof value.type === "string" && FORMS.has(value.type) && "value" in value) {
    const v = value.value;
    switch (value.type) {
      case "text":
      case "error-text":
        if (typeof v === "string") return { type: value.type, value: v };
        break;
      case "json":
      case "error-json":
        return { type: value.type, value: v };
      case "content":
        if (Array.isArray(v)) {
          const parts = v.filter(isPart);
          if (parts.length === v.length) return { type: "content", value: parts };
        }
        break;
    }
  }
  return { type: "json", value: value ?? null };
}

function isPart(value: unknown): value is { type: string } & Record<string, unknown> {
  return isObject(value) && typeof value.type === "string";
}

function fencedOutput(output: ToolModelOutput, origin: string): ToolModelOutput {
  const fenced = (value: unknown) => String(fence(tainted(value, origin)));
  switch (output.type) {
    case "text":
    case "json":
      return { type: "text", value: fenced(output.value) };
    case "error-text":
    case "error-json":
      return { type: "error-text", value: fenced(output.value) };
    case "content":
      // Text parts are fenced; media parts are kept (the AI SDK sends them as files, not as instructions).
      return {
        type: "content",
        value: output.value.map((part) => (part.type === "text" ? { ...part, text: fenced(part.text) } : part)),
      };
  }
}

// What a provider that does not speak the AI SDK's forms reads: the text, the JSON value, the parts, or `{ error }`.
function plainReadingOf(output: ToolModelOutput): unknown {
  switch (output.type) {
    case "text":
    case "json":
    case "content":
      return output.value;
    case "error-text":
    case "error-json":
      return { error: output.value };
  }
}
