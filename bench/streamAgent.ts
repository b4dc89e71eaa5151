// The one-turn agent of the streams-across-processes measurement (bench/streamsAcross.ts), shared with its worker
// process (bench/child/streamWorker.ts).
import { agentLoop$ } from "../actors/agents/agentLoop.js";

export const streamAgent = agentLoop$({
  id: "streamer",
  model: "model",
  tools: [],
  maxTurns: 1,
  warnTranscriptBytes: false,
});
