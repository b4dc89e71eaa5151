// The offline half of the browser harness page: an agent on IndexedDB whose model is the real
// `@ai-sdk/openai-compatible` provider calling the test's loopback server, run to its end in one call.
// The test cuts this page off from the server it was loaded from (its model server stays reachable) and
// compares what the run journals with the same run in a page that stayed online: a retried 503, a
// `capabilities.timeoutMs` that fires, and the first `app.stream` must need nothing fetched after load.
import { createOpenAICompatible } from "ai-sdk-openai-compatible-v3";
import { agentLoop$, createApp, createLlmEffect, defineConfig, fromAiSdk, type StreamPart } from "../../../index.js";
import type { IndexedDbStores } from "../../../adapters/indexeddb/index.js";

/** Serialisable options of one run: a fresh database per run. */
export interface OfflineRun {
  db: string;
  baseURL: string;
  executionId: string;
  /** `capabilities.timeoutMs` for the model effect; unset configures no timeout. */
  timeoutMs?: number;
}

/** What a run journaled, without the times: each record's type, and the step failures' errors. */
export interface OfflineReport {
  outcome: { ok: true; value: unknown } | { ok: false; error: { name: string; message: string } };
  types: string[];
  failures: { stepId: string; name: string; message: string }[];
  /** The parts `app.stream` delivered, by type (opened after the start, iterated to the end). */
  streamed: string[];
}

type Settle = <T>(
  work: Promise<T> | (() => Promise<T>),
) => Promise<{ ok: true; value: T } | { ok: false; error: { name: string; message: string } }>;

export const OFFLINE_LOOP = agentLoop$({ id: "offline", model: "model", tools: [] });

export function createOfflineDriver(storesOf: (name: string) => Promise<IndexedDbStores>, settle: Settle) {
  return {
    /** Starts the run, waits for its end and its stream's last part, and reports what it journaled. */
    async run(run: OfflineRun): Promise<OfflineReport> {
      const provider = createOpenAICompatible({ name: "loopback", baseURL: run.baseURL, includeUsage: true });
      const app = createApp(
        defineConfig({
          stores: await storesOf(run.db),
          logics: [OFFLINE_LOOP],
          effects: {
            model: createLlmEffect(fromAiSdk(provider.chatModel("test-model")), { retry: { backoffMs: 10 } }),
          },
          ...(run.timeoutMs === undefined ? {} : { capabilities: { timeoutMs: { model: run.timeoutMs } } }),
        }),
      );
      try {
        await app.start(OFFLINE_LOOP, { executionId: run.executionId, input: { prompt: "How do barn owls hunt?" } });
        const parts: StreamPart[] = [];
        const streamed = settle(async () => {
          for await (const part of app.stream(run.executionId)) parts.push(part);
          return null;
        });
        const outcome = await settle(() => app.result(run.executionId));
        const stream = await streamed;
        const log = await app.log(run.executionId);
        const failures = log.flatMap((r) =>
          r.type === "loom.step.failed"
            ? [{ stepId: r.stepId, name: r.error.name ?? "", message: r.error.message ?? "" }]
            : [],
        );
        return {
          outcome,
          types: log.map((r) => r.type),
          failures,
          streamed: stream.ok ? parts.map((p) => p.type) : [`stream failed: ${stream.error.message}`],
        };
      } finally {
        await app.close();
      }
    },
  };
}
