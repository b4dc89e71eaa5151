// The real AI SDK provider packages of each supported specification version, pointed at a baseURL.
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible as compatible1 } from "ai-sdk-openai-compatible-v1";
import { createOpenAICompatible as compatible2 } from "ai-sdk-openai-compatible-v2";
import { createOpenAICompatible as compatible3 } from "ai-sdk-openai-compatible-v3";
import type { AiSdkLanguageModel } from "../../adapters/ai-sdk/index.js";

export interface ProviderCase {
  /** The package and major, for test names. */
  name: string;
  spec: "v2" | "v3" | "v4";
  model(baseURL: string, options?: { fetch?: typeof fetch; headers?: Record<string, string> }): AiSdkLanguageModel;
}

/** Each major's provider: `@ai-sdk/openai-compatible` 1.x (v2), 2.x (v3), 3.x (v4), and `@ai-sdk/openai` 4.x (v4). */
export const PROVIDERS: ProviderCase[] = [
  {
    name: "@ai-sdk/openai-compatible 1.x",
    spec: "v2",
    model: (baseURL, o = {}) =>
      compatible1({ name: "loopback", baseURL, includeUsage: true, ...o }).chatModel("test-model"),
  },
  {
    name: "@ai-sdk/openai-compatible 2.x",
    spec: "v3",
    model: (baseURL, o = {}) =>
      compatible2({ name: "loopback", baseURL, includeUsage: true, ...o }).chatModel("test-model"),
  },
  {
    name: "@ai-sdk/openai-compatible 3.x",
    spec: "v4",
    model: (baseURL, o = {}) =>
      compatible3({ name: "loopback", baseURL, includeUsage: true, ...o }).chatModel("test-model"),
  },
  {
    name: "@ai-sdk/openai 4.x",
    spec: "v4",
    model: (baseURL, o = {}) => createOpenAI({ baseURL, apiKey: "test-key", ...o }).chat("test-model"),
  },
];
