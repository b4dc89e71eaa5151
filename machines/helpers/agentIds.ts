// The agent machines' journaled ids, built in one place. Step ids (`<loop>#turn:<i>:model`) and child ids
// (the TRANSITION records' `xstate.done.actor.tool:<i>:<j>`) are written to every journal, so the golden
// journals pin their spelling: a machine builds them here and matches events against them, never parses them.

/** The agent loop's child ids of its model call and of its compaction step. */
export const AGENT_MODEL_CHILD = "model";
export const AGENT_COMPACT_CHILD = "compact";
/** The agent loop's child id of the agent it handed the conversation off to (one per run). */
export const AGENT_HANDOFF_CHILD = "handoff";

/** The step of turn `turn`'s model call: `turn:<turn>:model`. */
export function modelStepOf(turn: number): string {
  return `turn:${turn}:model`;
}

/** The step of turn `turn`'s `j`-th tool call: `turn:<turn>:tool:<j>`. */
export function toolStepOf(turn: number, j: number): string {
  return `turn:${turn}:tool:${j}`;
}

/** The step that compacts the transcript before turn `turn`'s model call: `turn:<turn>:compact`. */
export function compactStepOf(turn: number): string {
  return `turn:${turn}:compact`;
}

/** The child id of turn `turn`'s `j`-th tool call: `tool:<turn>:<j>` (its done event is `xstate.done.actor.tool:<turn>:<j>`). */
export function toolChildOf(turn: number, j: number): string {
  return `tool:${turn}:${j}`;
}

/** The index of the tool call of `turn` (one of `calls`) whose child id is `childId`, or -1: matched against built ids. */
export function toolCallIndexOf(childId: string | undefined, turn: number, calls: number): number {
  for (let j = 0; j < calls; j++) if (toolChildOf(turn, j) === childId) return j;
  return -1;
}

/** The id the loop gives turn `turn`'s `j`-th tool call in the transcript: `call_<turn>_<j>`. */
export function toolCallIdOf(turn: number, j: number): string {
  return `call_${turn}_${j}`;
}

/** The conversation's child ids of its model call and of its summary. */
export const CONVERSATION_MODEL_CHILD = "model";
export const CONVERSATION_SUMMARIZE_CHILD = "summarize";

/** The step of the conversation's reply to its `n`-th user message: `msg:<n>:model`. */
export function replyStepOf(n: number): string {
  return `msg:${n}:model`;
}

/** The step that folds the transcript after the `n`-th user message: `msg:<n>:summarize`. */
export function summarizeStepOf(n: number): string {
  return `msg:${n}:summarize`;
}

/** Step ids of agentLoop$ tool frames: `<loop>#turn:<i>:tool:<j>` (ADR 0140 D9). */
export const AGENT_TOOL_STEP = /#turn:\d+:tool:\d+$/;
