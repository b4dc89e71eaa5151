// The story's agent: an agentLoop$ on a scripted model with two tools over a small built-in corpus.
// Nothing here touches the network; the model and tools take a little time (the page's `pace`) so
// there is a run in flight to reload.
import {
  agentLoop$,
  agentTool,
  createLlmEffect,
  createToolEffect,
  scriptedModel,
  type Effect,
  type EffectContext,
  type Message,
  type ModelReply,
} from "../../index.js";

export const LOOP_ID = "field-notes";
/** The sub-agent the loop delegates a check to (a child execution, shown nested in the timeline). */
export const CHECKER_ID = "fact-check";
const CHECKER_SYSTEM = "You check one field note against the notebook and say whether it holds.";
export const DEFAULT_PROMPT = "How do barn owls hunt in the dark?";

interface Note {
  id: string;
  title: string;
  text: string;
}

const CORPUS: Note[] = [
  {
    id: "n1",
    title: "Hearing in the dark",
    text: "A barn owl locates prey by sound alone: its ears sit at different heights, so it hears a vole's rustle in two dimensions and strikes within a degree in complete darkness.",
  },
  {
    id: "n2",
    title: "The facial disc",
    text: "The heart-shaped facial disc works like a dish aerial, funnelling sound to the ears; the owl reshapes it with small muscles to focus on a noise.",
  },
  {
    id: "n3",
    title: "Silent flight",
    text: "Comb-like serrations on the leading edge of the wing and a velvety down break up turbulence, so the owl's approach makes almost no sound a vole could hear.",
  },
  {
    id: "n4",
    title: "Hunting from a perch",
    text: "Barn owls hunt low over rough grassland at dusk and at night, quartering the field or waiting on a fence post, then dropping talons first.",
  },
  {
    id: "n5",
    title: "Prey and pellets",
    text: "Field voles are the staple prey; an owl swallows them whole and coughs up a pellet of fur and bones, which tells ecologists exactly what it ate.",
  },
  {
    id: "n6",
    title: "Nest sites",
    text: "Barn owls do not build nests: they lay in hollow trees, barn lofts and nest boxes, often returning to the same site for years.",
  },
  {
    id: "n7",
    title: "Vision at night",
    text: "The eyes are large and rich in rods, good in dim light, yet a barn owl still relies on hearing when there is no light at all.",
  },
];

const tokens = (text: string) => text.toLowerCase().match(/[a-z]+/g) ?? [];
const STOP = new Set(["how", "do", "the", "in", "a", "of", "and", "what", "does", "is", "to"]);

// "owl" matches "owls", "hunt" matches "hunting": a word matches another it is a prefix of.
const matches = (a: string, b: string) => Math.min(a.length, b.length) >= 3 && (a.startsWith(b) || b.startsWith(a));

/** The three notes sharing most words with the query. */
export function searchNotes(q: string): { id: string; title: string }[] {
  const words = tokens(q).filter((w) => !STOP.has(w));
  return CORPUS.map((note) => ({
    note,
    score: tokens(`${note.title} ${note.text}`).filter((t) => words.some((w) => matches(t, w))).length,
  }))
    .filter((scored) => scored.score > 0)
    .sort((a, b) => b.score - a.score || a.note.id.localeCompare(b.note.id))
    .slice(0, 3)
    .map(({ note }) => ({ id: note.id, title: note.title }));
}

function readNote(id: string): Note {
  const note = CORPUS.find((n) => n.id === id);
  if (!note) throw new Error(`no note "${id}"`);
  return note;
}

/** Tool results in the transcript, by tool name, oldest first. */
function results(messages: Message[], toolName: string): unknown[] {
  return messages.filter((m) => m.role === "tool" && m.toolName === toolName).map((m) => m.content);
}

/**
 * The scripted model: search, read the two best notes, search again for prey, read one more, answer.
 * Each reply is computed from the transcript, so a resumed run gets exactly the replies it would have.
 */
export function researchScript(request: { messages: Message[] }, call: number): ModelReply {
  const prompt = String(request.messages.find((m) => m.role === "user")?.content ?? DEFAULT_PROMPT);
  const searches = results(request.messages, "search") as { id: string; title: string }[][];
  const read = (results(request.messages, "read_note") as Note[]).map((n) => n.id);
  const unread = (hits: { id: string }[] | undefined) =>
    (hits ?? []).map((h) => h.id).filter((id) => !read.includes(id));
  const usage = { inputTokens: 120 + 40 * call, outputTokens: 24 };
  switch (call) {
    case 0:
      return { text: "Searching my notes first.", toolCalls: [{ toolName: "search", input: { q: prompt } }], usage };
    case 1:
      return {
        text: "Reading the two best matches.",
        toolCalls: unread(searches[0])
          .slice(0, 2)
          .map((id) => ({ toolName: "read_note", input: { id } })),
        usage,
      };
    case 2:
      return {
        text: "And what it hunts.",
        toolCalls: [{ toolName: "search", input: { q: "prey voles field" } }],
        usage,
      };
    case 3:
      // One more note, and a sub-agent checks the first one meanwhile.
      return {
        text: "One more note, and a second opinion on the first.",
        toolCalls: [
          ...unread(searches[1])
            .slice(0, 1)
            .map((id) => ({ toolName: "read_note", input: { id } })),
          ...read.slice(0, 1).map((id) => ({ toolName: CHECKER_ID, input: { prompt: `Check note ${id}.` } })),
        ],
        usage,
      };
    default: {
      const notes = (results(request.messages, "read_note") as Note[]).map(
        (n) => `${n.text.split(/[:;,.]/)[0]} (${n.title.toLowerCase()})`,
      );
      const [checked] = results(request.messages, CHECKER_ID);
      const answer = `From ${notes.length} field notes: ${notes.join("; ")}.${checked === undefined ? "" : ` ${String(checked)}`}`;
      // "... and save it": saving the answer is a tool that needs the user's approval (needsApproval).
      if (!/\bsave\b/i.test(prompt)) return { text: answer, usage };
      const [saved] = results(request.messages, "save_note");
      if (saved === undefined)
        return {
          text: "Saving the answer needs your approval.",
          toolCalls: [{ toolName: "save_note", input: { title: prompt, text: answer } }],
          usage,
        };
      const denied = typeof saved === "object" && saved !== null && "error" in saved;
      return { text: `${answer} ${denied ? "Not saved: you denied it." : "Saved to your notebook."}`, usage };
    }
  }
}

/** The checker's script: read the note, then say it holds. */
export function checkerScript(request: { messages: Message[] }, call: number): ModelReply {
  const usage = { inputTokens: 60 + 30 * call, outputTokens: 12 };
  const id = /note (n\d+)/.exec(String(request.messages.find((m) => m.role === "user")?.content))?.[1] ?? "n1";
  if (call === 0) return { toolCalls: [{ toolName: "read_note", input: { id } }], usage };
  const [note] = results(request.messages, "read_note") as Note[];
  return { text: `A sub-agent checked “${note?.title ?? id}”: it holds.`, usage };
}

/** The sub-agent: reads the note it is given and says whether it holds. */
export const factChecker = agentLoop$({
  id: CHECKER_ID,
  model: "model",
  tools: [{ name: "read_note", description: "Read one note by id." }],
  system: CHECKER_SYSTEM,
  maxTurns: 3,
  warnTranscriptBytes: false,
});

/** The loop the page starts and resumes; registered in `logics` so a fresh page load can resume by id. */
export const researchLoop = agentLoop$({
  id: LOOP_ID,
  model: "model",
  tools: [
    { name: "search", description: "Search the field notes; returns { id, title }[]." },
    { name: "read_note", description: "Read one note by id." },
    { name: "save_note", description: "Save a note to the user's notebook (asks the user first)." },
    agentTool(factChecker, { description: "A second opinion on one note: { prompt: 'Check note <id>.' }." }),
  ],
  system: "You answer from the field notes only, citing them.",
  maxTurns: 8,
  warnTranscriptBytes: false,
});

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/**
 * The effects, taking `pace` ms per tool call (half of it per model call), and reporting every live
 * call to `onCall` before it runs: what ran in this page load, as opposed to what the journal served.
 */
export function researchEffects(pace: number, onCall: (ctx: EffectContext) => void): Record<string, Effect> {
  // One model for both agents: the checker is told apart by its system prompt.
  const llm = createLlmEffect(
    scriptedModel((request, call) =>
      request.messages[0]?.content === CHECKER_SYSTEM ? checkerScript(request, call) : researchScript(request, call),
    ),
  );
  return {
    model: {
      ...llm,
      run: async (input, ctx) => {
        onCall(ctx);
        await sleep(pace / 2, ctx.signal);
        return llm.run(input, ctx);
      },
    },
    search: createToolEffect(async ({ q }: { q: string }, ctx) => {
      onCall(ctx);
      await sleep(pace, ctx.signal);
      return searchNotes(q);
    }),
    read_note: createToolEffect(async ({ id }: { id: string }, ctx) => {
      onCall(ctx);
      await sleep(pace, ctx.signal);
      return readNote(id);
    }),
    save_note: createToolEffect(
      async ({ title }: { title: string; text: string }, ctx) => {
        onCall(ctx);
        await sleep(pace, ctx.signal);
        return { saved: title };
      },
      { needsApproval: true },
    ),
  };
}
