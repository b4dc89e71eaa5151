// loomwork approvals [executionId...]: the tool calls that wait for a human (needsApproval), read from the
// journal of each running execution; the decision is sent through the app that runs it.
import { pendingAfter, TOOL_APPROVAL_EVENT, type PendingApproval } from "../../actors/agents/approvals.js";
import { isJournalRecord } from "../../stores/schema.js";
import { command } from "../context.js";
import { isSealed, readRecords, requireExecution } from "../journal.js";
import { valueText } from "../render.js";
import { printable, table } from "../terminal.js";

export const approvals = command(
  "approvals",
  "List the tool calls that wait for a human's approval (needsApproval), per running execution.",
  {
    args: { "[executionId...]": "only these executions (default: every running one)" },
    details: [
      `A parked call is decided with \`loomwork approve <executionId> <toolCallId>\` or \`loomwork deny ... --reason\` (through the app that runs it), or by sending { type: "${TOOL_APPROVAL_EVENT}", toolCallId, approved, reason? } to its execution in that app; the model sees a denial as the tool's result.`,
      "Read-only: works beside the running app. Sealed executions (security.crypto) are listed as sealed; their calls are not shown.",
      "With --json: [{ executionId, toolCallId, toolName, input, stepId }] and, for sealed executions, { executionId, sealed: true }.",
    ],
    examples: ["loomwork approvals", "loomwork approvals ops-1 --json"],
  },
  async (ctx) => {
    const stores = await ctx.journal();
    const ids =
      ctx.positionals.length > 0
        ? ctx.positionals
        : (await stores.events.listExecutions()).filter((e) => e.status === "running").map((e) => e.executionId);
    const rows: (PendingApproval & { executionId: string })[] = [];
    const sealed: string[] = [];
    for (const executionId of ids) {
      await requireExecution(stores, executionId);
      let pending: PendingApproval[] = [];
      for (const record of await readRecords(stores, executionId)) {
        if (isSealed(record)) {
          sealed.push(executionId);
          pending = [];
          break;
        }
        // Only a model's reply parks calls (approvalsAsked finds none in a tool's output).
        if (isJournalRecord(record)) pending = pendingAfter(pending, record);
      }
      rows.push(...pending.map((a) => ({ executionId, ...a })));
    }
    if (ctx.json) return ctx.printJson([...rows, ...sealed.map((executionId) => ({ executionId, sealed: true }))]);
    const { c } = ctx;
    if (rows.length === 0) ctx.out(c.dim("no tool call waits for approval"));
    else {
      const lines = table(
        [
          ["EXECUTION", "TOOL CALL", "TOOL", "INPUT"].map((h) => c.dim(h)),
          ...rows.map((r) => [
            c.bold(printable(r.executionId)),
            printable(r.toolCallId),
            printable(r.toolName),
            valueText(r.input, 60, false),
          ]),
        ],
        [],
      );
      for (const line of lines) ctx.out(line);
      ctx.out(
        c.dim(
          `decide with loomwork approve <executionId> <toolCallId>, or loomwork deny <executionId> <toolCallId> --reason <text>`,
        ),
      );
    }
    for (const executionId of sealed)
      ctx.out(c.yellow(`${printable(executionId)}: sealed (security.crypto): its calls are not shown`));
  },
);
