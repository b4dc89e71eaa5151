// Boot-time validation of the effect options: every refusal happens at createApp, never mid-run.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ConfigError } from "../../actors/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { countingModel } from "./helpers.js";

const base = (): LoomConfig => ({
  stores: memoryStores(),
  effects: { search: createToolEffect(async () => 1), model: countingModel().effect },
});
const refusal = (config: unknown): ConfigError => {
  try {
    createApp(config as LoomConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toBeInstanceOf(TypeError);
    return error as ConfigError;
  }
  throw new Error("createApp accepted the config");
};

const GROUPED: Record<string, string[]> = {
  execution: ["effectMiddleware", "snapshotEvery", "claimCheck"],
  security: ["crypto", "redact"],
  compliance: ["erase"],
  observability: ["onWarn", "inspect"],
  capabilities: ["grants", "quotas", "guardRequest", "retry", "timeoutMs"],
};

describe("the capabilities group and the grouped spelling", () => {
  it.each(Object.entries(GROUPED).flatMap(([group, keys]) => keys.map((key) => [group, key])))(
    "refuses %s.%s spelled flat, naming the grouped path",
    (group, key) => {
      const error = refusal({ ...base(), [key]: {} });
      expect(error.path).toBe(key);
      expect(error.message).toContain(`write it as ${group}: { ${key}: ... }`);
    },
  );

  it("names the nested path of a quota spelled flat or one level too high", () => {
    expect(refusal({ ...base(), maxTokens: 10 }).message).toContain("capabilities: { quotas: { maxTokens: ... } }");
    expect(refusal({ ...base(), capabilities: { maxModelCalls: 10 } }).message).toContain(
      "capabilities: { quotas: { maxModelCalls: ... } }",
    );
  });

  it("names the right group of an option written in the wrong one", () => {
    const error = refusal({ ...base(), execution: { timeoutMs: 100 } });
    expect(error.path).toBe("execution.timeoutMs");
    expect(error.message).toContain("write it as capabilities: { timeoutMs: ... }");
  });

  it("refuses unknown keys in capabilities and in its quotas", () => {
    expect(refusal({ ...base(), capabilities: { grant: {} } }).message).toMatch(
      /"capabilities.grant": unknown option. Known capabilities options: grants, quotas/,
    );
    expect(refusal({ ...base(), capabilities: { quotas: { maxCost: 3 } } }).path).toBe("capabilities.quotas.maxCost");
  });

  it.each([0, -1, 1.5, "3", null])("refuses a quota of %j: a positive integer", (value) => {
    expect(refusal({ ...base(), capabilities: { quotas: { maxModelCalls: value } } }).message).toMatch(
      /"capabilities.quotas.maxModelCalls": a positive integer/,
    );
    expect(refusal({ ...base(), capabilities: { quotas: { maxTokens: value } } }).path).toBe(
      "capabilities.quotas.maxTokens",
    );
  });

  it("refuses a grant naming an effect the config does not register, and a grant that is not a list", () => {
    const error = refusal({ ...base(), capabilities: { grants: { researcher: ["search", "browse"] } } });
    expect(error.path).toBe("capabilities.grants.researcher");
    expect(error.message).toMatch(
      /grants effect "browse", which the config does not register \(registered effects: search, model\)/,
    );
    expect(refusal({ ...base(), capabilities: { grants: { researcher: "search" } } }).message).toMatch(
      /an array of effect ids/,
    );
    expect(refusal({ ...base(), capabilities: { grants: ["search"] } }).path).toBe("capabilities.grants");
  });

  it("refuses a guard that is not a function, bad retry options and bad timeouts", () => {
    expect(refusal({ ...base(), capabilities: { guardRequest: true } }).path).toBe("capabilities.guardRequest");
    expect(refusal({ ...base(), capabilities: { retry: { attempts: 0 } } }).path).toBe("capabilities.retry.attempts");
    expect(refusal({ ...base(), capabilities: { retry: { attempts: 2, backoffMs: "1s" } } }).path).toBe(
      "capabilities.retry.backoffMs",
    );
    expect(refusal({ ...base(), capabilities: { retry: { attempts: 2, retryOn: 1 } } }).path).toBe(
      "capabilities.retry.retryOn",
    );
    expect(refusal({ ...base(), capabilities: { timeoutMs: 0 } }).path).toBe("capabilities.timeoutMs");
    expect(refusal({ ...base(), capabilities: { timeoutMs: { search: -5 } } }).path).toBe(
      "capabilities.timeoutMs.search",
    );
    expect(refusal({ ...base(), capabilities: { timeoutMs: { crawl: 5 } } }).message).toMatch(
      /names effect "crawl".*use "\*" for the rest/,
    );
    expect(refusal({ ...base(), observability: { onWarn: "console" } }).path).toBe("observability.onWarn");
  });

  it("accepts a full, valid capabilities group", () => {
    expect(() =>
      createApp(
        defineConfig({
          ...base(),
          capabilities: {
            grants: { researcher: ["search", "model"], "*": [] },
            quotas: { maxModelCalls: 20, maxTokens: 100_000 },
            guardRequest: (request) => request,
            retry: { attempts: 3, backoffMs: 250, maxBackoffMs: 2_000, retryOn: () => true },
            timeoutMs: { model: 60_000, "*": 10_000 },
          },
        }),
      ),
    ).not.toThrow();
  });

  it("refuses before anything is written", async () => {
    const stores = memoryStores();
    expect(() => createApp({ ...base(), stores, capabilities: { quotas: { maxTokens: 0 } } })).toThrow(ConfigError);
    expect(await stores.events.listExecutions()).toEqual([]);
  });
});
