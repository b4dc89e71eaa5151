// Plain JSON Schema tool inputs (what MCP servers and the AI SDK's jsonSchema() hand in) are checked by
// @cfworker/json-schema: every keyword, no eval. A call whose input the schema forbids never reaches the
// tool: the model reads the problems as the tool's error result and can correct its call.
import { describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { createLlmEffect } from "../../actors/agents/model.js";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { jsonSchemaValidator, resolveToolSchema } from "../../actors/effects/toolSchema.js";
import { scriptedModel } from "../../adapters/scripted/index.js";
import type { ModelRequest } from "../../machines/helpers/messages.js";
import { memoryStores } from "../../stores/memory.js";

const SCHEMA = {
  type: "object",
  properties: {
    q: { type: "string", pattern: "^[a-z]+$" },
    day: { type: "string", format: "date" },
    limit: { type: "number", exclusiveMinimum: 0 },
    tags: { type: "array", minItems: 1, uniqueItems: true, items: { $ref: "#/$defs/tag" } },
    id: { anyOf: [{ type: "string" }, { type: "integer" }] },
  },
  required: ["q"],
  additionalProperties: false,
  $defs: { tag: { type: "string", maxLength: 5 } },
};

const GOOD = { q: "owls", day: "2026-01-31", limit: 3, tags: ["bird"], id: 7 };

// Each bad input, the keyword that refuses it, and the path the problem names.
const BAD: [string, Record<string, unknown>, RegExp][] = [
  ["pattern", { ...GOOD, q: "Owls!" }, /^input\.q: .*pattern/],
  ["format", { ...GOOD, day: "31/01/2026" }, /^input\.day: .*format "date"/],
  ["anyOf", { ...GOOD, id: true }, /^input\.id: .*any subschema/],
  ["$ref", { ...GOOD, tags: ["feathered"] }, /^input\.tags\[0\]: .*too long/],
  ["minItems", { ...GOOD, tags: [] }, /^input\.tags: /],
  ["uniqueItems", { ...GOOD, tags: ["a", "a"] }, /^input\.tags: Duplicate items/],
  ["exclusiveMinimum", { ...GOOD, limit: 0 }, /^input\.limit: /],
  ["additionalProperties: false", { ...GOOD, extra: 1 }, /^input\.extra: not allowed/],
  ["required", { day: "2026-01-31" }, /^input: .*"q"/],
];

describe("plain JSON Schema tool inputs (@cfworker/json-schema)", () => {
  it("accepts what the schema allows and leaves the schema the model receives untouched", () => {
    const before = JSON.stringify(SCHEMA);
    const check = jsonSchemaValidator(SCHEMA);
    expect(check(GOOD)).toEqual([]);
    expect(JSON.stringify(SCHEMA)).toBe(before);
    expect(resolveToolSchema(SCHEMA, "x").jsonSchema).toBe(SCHEMA);
  });

  it.each(BAD)("refuses input that breaks %s, naming the path", (_keyword, input, problem) => {
    const problems = jsonSchemaValidator(SCHEMA)(input);
    expect(problems.length).toBeGreaterThan(0);
    expect(
      problems.some((p) => problem.test(p)),
      problems.join("\n"),
    ).toBe(true);
  });

  it("reads the draft from $schema (draft-07 tuple items), 2020-12 otherwise", () => {
    const tuple = { $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "string" }] };
    expect(jsonSchemaValidator(tuple)([1])).not.toEqual([]);
    const prefix = { type: "array", prefixItems: [{ type: "string" }] };
    expect(jsonSchemaValidator(prefix)([1])).not.toEqual([]);
    expect(jsonSchemaValidator(prefix)(["a", 2])).toEqual([]);
  });

  it("an agent's call with a forbidden input never runs the tool: the model reads the problems and corrects its call", async () => {
    const ran: unknown[] = [];
    const requests: ModelRequest[] = [];
    const model = scriptedModel((request, call) => {
      requests.push(request);
      const input = BAD[call]?.[1];
      return input
        ? { toolCalls: [{ toolName: "search", input }] }
        : call === BAD.length
          ? { toolCalls: [{ toolName: "search", input: GOOD }] }
          : { text: "done" };
    });
    const app = createApp(
      defineConfig({
        stores: memoryStores(),
        effects: {
          model: createLlmEffect(model),
          search: createToolEffect(async (input: unknown) => (ran.push(input), "hits"), { inputSchema: SCHEMA }),
        },
      }),
    );
    await app.start(agentLoop$({ id: "s", model: "model", tools: ["search"] }), {
      executionId: "s",
      input: { prompt: "find owls" },
    });
    await app.result("s");
    expect(ran).toEqual([GOOD]);
    // Each refused call reached the model as an error result naming what was wrong.
    BAD.forEach(([keyword, , problem], i) => {
      const last = requests[i + 1]!.messages.at(-1)!;
      expect(last.role, keyword).toBe("tool");
      const error = (last.content as { error: string }).error;
      expect(error, keyword).toMatch(/^Invalid input for tool "search": /);
      expect(error.slice(error.indexOf(": ") + 2), keyword).toMatch(new RegExp(problem.source.replace(/^\^/, "")));
    });
    expect(requests.at(-1)!.messages.at(-1)!.content).toBe("hits");
    await app.close();
  });
});
