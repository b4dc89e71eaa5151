// The research agent of the stories: agentLoop$ with three tools on the scripted offline model.
// Deterministic: the same run prints the same answer on every machine, with no network and no keys.
// Exported so the CLI can replay its journals exactly (`loomwork stats --logic stories/support/researchAgent.ts`).
import {
  agentLoop$,
  createLlmEffect,
  createToolEffect,
  scriptedModel,
  tainted,
  type Effect,
  type ModelReply,
} from "../../index.js";

export const RESEARCH_QUESTION = "How do barn owls catch prey in complete darkness?";

/** The agent: a system prompt, three tools, and a cap on turns. */
export const researchAgent = agentLoop$({
  id: "researcher",
  model: "model",
  system:
    "You are a careful research assistant. Search for sources, read the most relevant pages with fetchPage, " +
    "keep what matters with takeNotes, and answer in a short paragraph citing your sources as [n].",
  tools: [
    { name: "search", description: "Web search: { query } -> the top three { title, url, snippet }." },
    { name: "fetchPage", description: "Reads a page: { url } -> { title, text } (untrusted web content)." },
    { name: "takeNotes", description: "Keeps findings for the answer: { notes: string[] }." },
  ],
  maxTurns: 10,
});

export interface Page {
  url: string;
  title: string;
  text: string;
}

/** The pages the offline web of the stories holds. */
export const PAGES: Page[] = [
  {
    url: "https://owls.example.org/konishi-1973",
    title: "Konishi (1973): barn owls strike prey in total darkness",
    text:
      "In a light-tight room, barn owls (Tyto alba) caught live mice on a floor of foam rubber covered with sawdust. " +
      "Under infrared viewing, the owls struck within one degree of the target in both azimuth and elevation. When the " +
      "mouse dragged a rustling piece of paper, the owl struck the paper, not the mouse: hearing alone guided the strike. " +
      "Plugging one ear produced consistent errors, so the owl compares the sound at its two ears.",
  },
  {
    url: "https://owls.example.org/facial-disc",
    title: "The facial disc: a parabolic sound collector",
    text:
      "The heart-shaped face of the barn owl is a ruff of stiff, densely packed feathers that works like a parabolic " +
      "reflector, funnelling sound towards the ear openings behind it. Owls can reshape the disc with facial muscles. " +
      "Removing the ruff feathers degrades localisation in elevation far more than in azimuth.",
  },
  {
    url: "https://owls.example.org/asymmetric-ears",
    title: "Asymmetric ears and vertical localisation",
    text:
      "The barn owl's left ear opening sits higher than the right and points downward, the right points upward. A sound " +
      "from below is therefore louder in the left ear: the owl reads elevation from the level difference between the " +
      "ears and azimuth from the time difference, which its brain resolves to about 30 microseconds. Together these form " +
      "a two-dimensional auditory map in the inferior colliculus.",
  },
  {
    url: "https://owls.example.org/silent-flight",
    title: "Why owl flight is silent",
    text:
      "Comb-like serrations on the leading edge of the outer primary feathers and a velvety upper surface break up " +
      "turbulence, so an owl's approach is nearly inaudible to prey, and to the owl itself, which keeps listening while " +
      "it flies.",
  },
  {
    url: "https://owls.example.org/pellets",
    title: "What barn owl pellets tell us about diet",
    text: "Pellets show that voles, shrews and mice make up most of the diet; owls hunt over rough grassland at night.",
  },
];

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]+/g) ?? []);

/** The top three pages by word overlap with the query; deterministic. */
export function search(query: string): { title: string; url: string; snippet: string }[] {
  const q = words(query);
  const score = (page: Page) => [...words(`${page.title} ${page.text}`)].filter((w) => q.has(w)).length;
  return [...PAGES]
    .sort((a, b) => score(b) - score(a) || a.url.localeCompare(b.url))
    .slice(0, 3)
    .map((p) => ({ title: p.title, url: p.url, snippet: `${p.text.slice(0, 90)}…` }));
}

const [KONISHI, DISC, EARS] = PAGES as [Page, Page, Page, ...Page[]];

/** One reply per turn: search, read two pages, note and search again, read, note, answer. */
export const RESEARCH_SCRIPT: ModelReply[] = [
  {
    text: "Let me search for experiments on owl hunting in the dark.",
    toolCalls: [{ toolName: "search", input: { query: "barn owls hunting prey in total darkness" } }],
    usage: { inputTokens: 212, outputTokens: 31 },
  },
  {
    text: "Two results look primary; reading both.",
    toolCalls: [
      { toolName: "fetchPage", input: { url: KONISHI.url } },
      { toolName: "fetchPage", input: { url: DISC.url } },
    ],
    usage: { inputTokens: 498, outputTokens: 44 },
  },
  {
    text: "Noting the findings, then checking how elevation is resolved.",
    toolCalls: [
      {
        toolName: "takeNotes",
        input: {
          notes: [
            "Owls strike within 1 degree in total darkness, by hearing alone [1].",
            "The facial disc funnels sound to the ears like a parabolic dish [2].",
          ],
        },
      },
      { toolName: "search", input: { query: "asymmetric ears vertical sound localisation" } },
    ],
    usage: { inputTokens: 1_406, outputTokens: 58 },
  },
  {
    text: "Reading the page on ear asymmetry.",
    toolCalls: [{ toolName: "fetchPage", input: { url: EARS.url } }],
    usage: { inputTokens: 1_652, outputTokens: 27 },
  },
  {
    text: "One more note.",
    toolCalls: [
      {
        toolName: "takeNotes",
        input: {
          notes: ["Asymmetric ears: level difference gives elevation, time difference (~30 µs) gives azimuth [3]."],
        },
      },
    ],
    usage: { inputTokens: 2_085, outputTokens: 36 },
  },
  {
    text:
      "Barn owls hunt by ear. In a light-tight room they strike mice within about one degree, and follow a rustling paper " +
      "instead of the mouse, so hearing alone guides them [1]. Their facial disc collects sound like a parabolic dish [2], " +
      "and their asymmetric ear openings let them read elevation from the level difference between the ears and azimuth " +
      "from the time difference, resolved to about 30 µs [3].\n\n[1] " +
      `${KONISHI.url}\n[2] ${DISC.url}\n[3] ${EARS.url}`,
    usage: { inputTokens: 2_190, outputTokens: 118 },
  },
];

/** Resolves after `ms`, or rejects when `signal` aborts (the app closed, or the step was stopped). */
export function latency(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}

/** The effects, with a little simulated latency so a run takes long enough to be interrupted. */
export function researchEffects(options: { modelMs?: number; toolMs?: number } = {}): Record<string, Effect> {
  const { modelMs = 150, toolMs = 60 } = options;
  const llm = createLlmEffect(scriptedModel(RESEARCH_SCRIPT));
  return {
    model: { ...llm, run: async (request, ctx) => (await latency(modelMs, ctx.signal), llm.run(request, ctx)) },
    search: createToolEffect(
      async ({ query }: { query: string }, ctx) => (await latency(toolMs, ctx.signal), search(query)),
    ),
    // Web content is untrusted: tainted, so the loop fences it before the model sees it and records the origin.
    fetchPage: createToolEffect(async ({ url }: { url: string }, ctx) => {
      await latency(toolMs, ctx.signal);
      const page = PAGES.find((p) => p.url === url);
      return tainted(page ? { title: page.title, text: page.text } : { error: `404: ${url}` }, "web");
    }),
    takeNotes: createToolEffect(async ({ notes }: { notes: string[] }, ctx) => {
      await latency(toolMs / 2, ctx.signal);
      return { saved: notes.length };
    }),
  };
}

/** A one-line account of a tool call or model reply, for progress lines. */
export function describeStep(effectId: string, output: unknown): string {
  const value = (output as { __loomTainted?: string; value?: unknown })?.__loomTainted
    ? (output as { value: unknown }).value
    : output;
  if (effectId === "model") {
    const reply = value as ModelReply;
    const calls = (reply.toolCalls ?? []).map((c) => `${c.toolName}(${brief(c.input)})`);
    return calls.length ? `asks for ${calls.join(", ")}` : "answers";
  }
  if (effectId === "search") return `${(value as unknown[]).length} results`;
  if (effectId === "fetchPage") return `“${(value as { title?: string }).title ?? "?"}” (tainted: web)`;
  if (effectId === "takeNotes")
    return `kept ${(value as { saved: number }).saved} note${(value as { saved: number }).saved === 1 ? "" : "s"}`;
  return brief(value);
}

function brief(input: unknown): string {
  const values = input && typeof input === "object" ? Object.values(input) : [input];
  const text = values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
  return text.length > 48 ? `${text.slice(0, 47)}…` : text;
}
