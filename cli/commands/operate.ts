// loomwork send | approve | deny | stop | resume: operate a running execution, through the app that holds
// the journal (its control socket), or, when no app holds it, journaled by the CLI with --logic.
import { TOOL_APPROVAL_EVENT } from "../../actors/agents/approvals.js";
import { waitingCalls } from "../approvals.js";
import { command, type Context } from "../context.js";
import { NotFoundError } from "../errors.js";
import { operate, parseEvent, report, requireRunning } from "../operate.js";

const LOGIC = {
  logic: {
    type: "string",
    value: "<module>",
    description: "the machine, for when no app holds the journal: the CLI then journals the command itself",
  },
} as const;

const ROUTE =
  "An app that holds the journal and serves its control socket (serveControl from loomwork/fs) does it; with no app on the " +
  "journal, the CLI takes the writer lock and journals it with the machine from --logic (a step it starts runs when an app " +
  "resumes the execution). An app that holds the lock without a control socket cannot be reached: exit 5.";

export const send = command(
  "send",
  "Send an event to a running execution (journaled, like actor.send).",
  {
    args: {
      "<executionId>": "the execution",
      "<event-json>": 'the event, a JSON object with a "type", e.g. \'{"type":"USER_MESSAGE","text":"hi"}\'',
    },
    options: LOGIC,
    details: [
      ROUTE,
      'Resolves once the event is journaled. With --json: { executionId, op, via: "app" | "journal", status, value }.',
    ],
    examples: [
      `loomwork send chat-1 '{"type":"USER_MESSAGE","text":"hello"}'`,
      `loomwork send flow-7 '{"type":"CONTINUE"}' --logic dist/flows.js`,
    ],
  },
  async (ctx) => {
    const [executionId, text] = ctx.positionals as [string, string];
    const event = parseEvent(text);
    report(ctx, await operate(ctx, executionId, { op: "send", event }), `sent ${event.type} to ${executionId}`);
  },
);

/** The pending call (in the execution or one of its sub-agents), or NotFoundError naming the pending ones; a sealed journal is not checked here. */
async function requirePending(ctx: Context, executionId: string, toolCallId: string): Promise<void> {
  const { calls: pending, sealed } = await waitingCalls(await ctx.journal(), [executionId]);
  if (sealed.length > 0) return;
  if (pending.some((p) => p.toolCallId === toolCallId)) return;
  throw new NotFoundError(
    `no tool call "${toolCallId}" waits for approval in "${executionId}"`,
    pending.length
      ? `Waiting: ${pending.map((p) => `${p.toolCallId} (${p.toolName}${p.executionId === executionId ? "" : ` in ${p.executionId}`})`).join(", ")}.`
      : "Nothing waits for approval there; `loomwork approvals` lists what does.",
  );
}

function decision(approved: boolean) {
  return async (ctx: Context) => {
    const [executionId, toolCallId] = ctx.positionals as [string, string];
    // An ended execution is refused as `send` refuses it (1, LOOM_CLI_ENDED), before looking for the call.
    await requireRunning(ctx, executionId);
    await requirePending(ctx, executionId, toolCallId);
    const reason = typeof ctx.values.reason === "string" ? ctx.values.reason : undefined;
    const event = { type: TOOL_APPROVAL_EVENT, toolCallId, approved, ...(reason === undefined ? {} : { reason }) };
    report(
      ctx,
      await operate(ctx, executionId, { op: "send", event }),
      `${approved ? "approved" : "denied"} ${toolCallId} in ${executionId}`,
    );
  };
}

const APPROVAL_ARGS = {
  "<executionId>": "the execution",
  "<approvalId>": "the tool call's id, as `loomwork approvals` lists it",
};

export const approve = command(
  "approve",
  "Approve a tool call that waits for a human (needsApproval): the tool runs.",
  {
    args: APPROVAL_ARGS,
    options: LOGIC,
    details: [
      `Sends { type: "${TOOL_APPROVAL_EVENT}", toolCallId, approved: true }. The call must be pending (\`loomwork approvals\`), else exit 3.`,
      ROUTE,
    ],
    examples: ["loomwork approve ops-1 call_rm", "loomwork approvals ops-1   # the calls that wait, with their ids"],
  },
  decision(true),
);

export const deny = command(
  "deny",
  "Deny a tool call that waits for a human: the model sees the denial as the tool's result.",
  {
    args: APPROVAL_ARGS,
    options: {
      reason: { type: "string", value: "<text>", description: "why, passed to the model with the denial" },
      ...LOGIC,
    },
    details: [
      `Sends { type: "${TOOL_APPROVAL_EVENT}", toolCallId, approved: false, reason? }. The call must be pending, else exit 3.`,
      ROUTE,
    ],
    examples: ['loomwork deny ops-1 call_rm --reason "not on production hosts"'],
  },
  decision(false),
);

export const stop = command(
  "stop",
  "Stop a running execution (journaled as ended, stopped; its running effects are aborted).",
  {
    args: { "<executionId>": "the execution" },
    options: {
      reason: {
        type: "string",
        value: "<text>",
        description: 'the reason journaled with the stop (default "stopped by loomwork stop")',
      },
      ...LOGIC,
    },
    details: ["app.stop(executionId, reason) in the app that runs it. " + ROUTE],
    examples: ["loomwork stop research-1", 'loomwork stop research-1 --reason "runaway costs"'],
  },
  async (ctx) => {
    const executionId = ctx.positionals[0]!;
    const reason = typeof ctx.values.reason === "string" ? ctx.values.reason : undefined;
    report(
      ctx,
      await operate(ctx, executionId, { op: "stop", ...(reason === undefined ? {} : { reason }) }),
      `stopped ${executionId}`,
    );
  },
);

export const resume = command(
  "resume",
  "Have the running app resume an unfinished execution (app.resume): it replays and continues there.",
  {
    args: { "<executionId>": "the execution (running, not run by any app right now)" },
    details: [
      "Goes through the app that holds the journal and serves its control socket (serveControl from loomwork/fs): it resumes the execution " +
        "with the logics it holds and runs its effects. Resuming runs models and tools, which only an app has: with no app on the journal the " +
        "command fails (exit 1, LOOM_CLI_NO_APP); with an app that serves no control socket, exit 5.",
    ],
    examples: ["loomwork resume research-7", "loomwork ls --status running   # the unfinished executions"],
  },
  async (ctx) => {
    const executionId = ctx.positionals[0]!;
    report(ctx, await operate(ctx, executionId, { op: "resume" }), `resumed ${executionId}`);
  },
);
