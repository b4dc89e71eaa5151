// loomwork approvals [executionId...]: the tool calls that wait for a human (needsApproval), read from the
// journal of each running execution; the decision is sent through the app that runs it.
import { TOOL_APPROVAL_EVENT } from "../../actors/agents/approvals.js";
import { waitingCalls } from "../approvals.js";
import { command } from "../context.js";
import { requireExecution } from "../journal.js";
import { valueText } from "../render.js";
import { printable, table } from "../terminal.js";

export const approvals = command(
  "approvals",
  "List the tool calls that wait for a human's approval (needsApproval), per running execution and its sub-agents.",
  {
    args: { "[executionId...]": "only these executions (default: every running one)" },
    details: [
      `A parked call is decided with \`loomwork approve <executionId> <toolCallId>\` or \`loomwork deny ... --reason\` (through the app that runs it), or by sending { type: "${TOOL_APPROVAL_EVENT}", toolCallId, approved, reason? } to its execution in that app; the model sees a denial as the tool's result.`,
      "Read-only: works beside the running app. Sealed executions (security.crypto) are listed as sealed; their calls are not shown.",
      "A lead's sub-agents (agentTool) are part of its tree: `loomwork approvals <lead>` lists their calls too, AGENTS showing the agents from the lead down to the one that waits; decide one by the lead's id (`loomwork approve <lead> <toolCallId>`), which reaches the sub-agent.",
      "With --json: [{ executionId, toolCallId, toolName, input, stepId, path: [{ executionId, agent }] }] and, for sealed executions, { executionId, sealed: true }.",
    ],
    examples: ["loomwork approvals", "loomwork approvals ops-1 --json"],
  },
  async (ctx) => {
    const stores = await ctx.journal();
    for (const executionId of ctx.positionals) await requireExecution(stores, executionId);
    const { calls: rows, sealed } = await waitingCalls(
      stores,
      ctx.positionals.length > 0 ? ctx.positionals : undefined,
    );
    if (ctx.json) return ctx.printJson([...rows, ...sealed.map((executionId) => ({ executionId, sealed: true }))]);
    const { c } = ctx;
    if (rows.length === 0) ctx.out(c.dim("no tool call waits for approval"));
    else {
      const lines = table(
        [
          ["EXECUTION", "TOOL CALL", "TOOL", "INPUT", "AGENTS"].map((h) => c.dim(h)),
          ...rows.map((r) => [
            c.bold(printable(r.executionId)),
            printable(r.toolCallId),
            printable(r.toolName),
            valueText(r.input, 60, false),
            printable(r.path.map((step) => step.agent ?? "?").join(" > ")),
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
