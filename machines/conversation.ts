// A multi-session chat with a rolling summary: the second consumer of the summarizer effect (ADR 0137 D4).
// Each user message is a journaled model step; past `budget.maxBytes` the older transcript is folded into
// the summary by the same { messages } -> { summary } effect agentLoop$ compaction uses.
import { assign, setup } from "xstate";
import {
  CONVERSATION_MODEL_CHILD,
  CONVERSATION_SUMMARIZE_CHILD,
  replyStepOf,
  summarizeStepOf,
} from "./helpers/agentIds.js";
import { effectActor, stepInput } from "./helpers/effectActor.js";
import type { Message } from "./helpers/messages.js";
import { fencedMessages } from "./helpers/taint.js";
import { bytesOf, compacted, compactionSplit, messageBytes, replyOf, summaryOf } from "./helpers/transcript.js";

export interface ConversationMachineConfig {
  id: string;
  model: string;
  system?: string;
  budget: { summarizerToolId: string; maxBytes: number };
}

export interface ConversationContext {
  messages: Message[];
  bytes: number;
  /** Count of user messages so far: step ids are `msg:<n>:model` and `msg:<n>:summarize`. */
  n: number;
  session: number;
  summaries: number;
}

export type ConversationEvent = { type: "USER_MESSAGE"; text: string } | { type: "NEW_SESSION" } | { type: "END" };

export function createConversationMachine(config: ConversationMachineConfig) {
  return setup({
    types: {} as {
      context: ConversationContext;
      events: ConversationEvent;
      output: { messages: number; sessions: number; summaries: number; bytes: number };
    },
    actors: { [config.model]: effectActor(), [config.budget.summarizerToolId]: effectActor() },
  }).createMachine({
    id: config.id,
    context: () => {
      const messages: Message[] = config.system ? [{ role: "system", content: config.system }] : [];
      return { messages, bytes: bytesOf(messages), n: 0, session: 1, summaries: 0 };
    },
    initial: "idle",
    states: {
      idle: {
        on: {
          USER_MESSAGE: {
            target: "replying",
            actions: assign(({ context, event }) => {
              const message: Message = { role: "user", content: event.text };
              return {
                messages: [...context.messages, message],
                bytes: context.bytes + messageBytes(message),
                n: context.n + 1,
              };
            }),
          },
          NEW_SESSION: { actions: assign({ session: ({ context }) => context.session + 1 }) },
          END: "ended",
        },
      },
      replying: {
        invoke: {
          src: config.model,
          id: CONVERSATION_MODEL_CHILD,
          input: ({ context }) =>
            stepInput(replyStepOf(context.n), { messages: fencedMessages(context.messages), tools: [] }),
          onDone: {
            target: "budgeting",
            actions: assign(({ context, event }) => {
              const reply = replyOf(event.output);
              const message: Message = {
                role: "assistant",
                content: reply.text,
                ...(reply.parts ? { parts: reply.parts } : {}),
              };
              return { messages: [...context.messages, message], bytes: context.bytes + messageBytes(message) };
            }),
          },
        },
      },
      budgeting: {
        always: [
          {
            guard: ({ context }) =>
              context.bytes > config.budget.maxBytes && compactionSplit(context.messages).fold.length > 0,
            target: "summarizing",
          },
          { target: "idle" },
        ],
      },
      summarizing: {
        invoke: {
          src: config.budget.summarizerToolId,
          id: CONVERSATION_SUMMARIZE_CHILD,
          input: ({ context }) =>
            stepInput(summarizeStepOf(context.n), { messages: compactionSplit(context.messages).fold }),
          onDone: {
            target: "idle",
            actions: assign(({ context, event }) => {
              const messages = compacted(context.messages, summaryOf(event.output));
              return { messages, bytes: bytesOf(messages), summaries: context.summaries + 1 };
            }),
          },
        },
      },
      ended: { type: "final" },
    },
    output: ({ context }) => ({
      messages: context.messages.length,
      sessions: context.session,
      summaries: context.summaries,
      bytes: context.bytes,
    }),
  });
}
