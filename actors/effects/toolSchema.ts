// A tool's input schema: a Standard Schema (zod 4, valibot, arktype), an AI SDK schema (`jsonSchema()`,
// `zodSchema()`) or a plain JSON Schema, resolved once into the JSON Schema the model receives and the
// validation the input meets before the tool runs.
import { Validator, type SchemaDraft } from "@cfworker/json-schema";
import { LoomworkError } from "../../stores/errors.js";
import { isObject } from "../../stores/shapes.js";
import { RUNTIME_ERROR_CODES } from "../constants.js";
import { ConfigError } from "../errors.js";
import type { StandardSchemaIssue, StandardSchemaV1 } from "./standardSchema.js";

/** A JSON Schema object (draft 7 or later). */
export type JsonSchema = Record<string, unknown>;

/** What a tool may declare its input with. */
export type ToolInputSchema = StandardSchemaV1 | JsonSchema;

/** A schema resolved: the JSON Schema sent to the model, and the check of an input. */
export interface ResolvedToolSchema {
  jsonSchema: JsonSchema;
  /** The validated (maybe transformed) input, or the problems found, one a line. */
  validate(input: unknown): Promise<{ value: unknown } | { problems: string[] }>;
}

/** The input the model gave a tool failed its schema: the model receives the problems as the tool's error result. */
export class ToolInputError extends LoomworkError {
  static override readonly name: string = "ToolInputError";
  readonly effectId: string;
  readonly problems: string[];
  constructor(effectId: string, problems: string[]) {
    super(
      RUNTIME_ERROR_CODES.toolInput,
      `Invalid input for tool "${effectId}": ${problems.join("; ")}. Call it again with input that matches its schema.`,
    );
    this.effectId = effectId;
    this.problems = problems;
  }
}

const AI_SDK_SCHEMA = Symbol.for("vercel.ai.schema");

/** Resolves a tool's declared schema; refuses (ConfigError naming `path`) one it cannot turn into JSON Schema. */
export function resolveToolSchema(schema: unknown, path: string): ResolvedToolSchema {
  if (isStandardSchema(schema)) {
    const standard = schema["~standard"];
    const jsonSchema = standard.jsonSchema?.input({ target: "draft-07" });
    if (!jsonSchema) {
      throw new ConfigError(
        path,
        `a ${standard.vendor} schema without the Standard JSON Schema extension (zod >= 4.2, arktype >= 2.1.28, valibot's toStandardJsonSchema); give the JSON Schema as it is instead.`,
      );
    }
    return {
      jsonSchema,
      async validate(input) {
        const result = await standard.validate(input);
        return result.issues ? { problems: result.issues.map(issueText) } : { value: result.value };
      },
    };
  }
  if (isObject(schema) && AI_SDK_SCHEMA in schema) {
    // The AI SDK's Schema: { jsonSchema, validate? }; without its own validate, the JSON Schema checks.
    const jsonSchema: unknown = Reflect.get(schema, "jsonSchema");
    if (!isObject(jsonSchema)) throw new ConfigError(path, "an AI SDK schema whose jsonSchema is not an object.");
    const own: unknown = Reflect.get(schema, "validate");
    if (typeof own !== "function") return jsonSchemaTool(jsonSchema);
    return {
      jsonSchema,
      async validate(input) {
        const result: unknown = await Reflect.apply(own, schema, [input]);
        if (isObject(result) && result.success === true) return { value: result.value };
        const error = isObject(result) ? result.error : undefined;
        return { problems: [error instanceof Error ? error.message : String(error)] };
      },
    };
  }
  if (isObject(schema)) return jsonSchemaTool(schema);
  throw new ConfigError(
    path,
    "a Standard Schema (zod 4, valibot, arktype), an AI SDK jsonSchema(...), or a JSON Schema object.",
  );
}

function jsonSchemaTool(jsonSchema: JsonSchema): ResolvedToolSchema {
  const check = jsonSchemaValidator(jsonSchema);
  return {
    jsonSchema,
    async validate(input) {
      const problems = check(input);
      return problems.length ? { problems } : { value: input };
    },
  };
}

function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (!isObject(value) && typeof value !== "function") return false;
  const props: unknown = Reflect.get(Object(value), "~standard");
  return isObject(props) && typeof props.validate === "function";
}

function issueText(issue: StandardSchemaIssue): string {
  const path = (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** The drafts `@cfworker/json-schema` knows, by the `$schema` URI that names them. */
const DRAFTS: ReadonlyArray<[RegExp, SchemaDraft]> = [
  [/draft-04/, "4"],
  [/draft-0[67]/, "7"],
  [/2019-09/, "2019-09"],
];

// Keywords whose own error only says that a subschema failed: the subschema's error says what is wrong.
const WRAPPERS = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
  "allOf",
  "dependentSchemas",
  "unevaluatedProperties",
  "unevaluatedItems",
  "then",
  "else",
]);

/**
 * A plain JSON Schema's check, by `@cfworker/json-schema` (every keyword of drafts 4, 7, 2019-09 and 2020-12,
 * `format` included; no `eval`, so it runs under a strict CSP). The draft is the one `$schema` names, else
 * 2020-12 (the MCP default). Returns the problems found, one per failed keyword, each with its path.
 */
export function jsonSchemaValidator(schema: JsonSchema): (value: unknown) => string[] {
  const uri = typeof schema.$schema === "string" ? schema.$schema : "";
  const draft = DRAFTS.find(([pattern]) => pattern.test(uri))?.[1] ?? "2020-12";
  const validator = new Validator(schema, draft, false);
  return (value) => {
    const result = validator.validate(value);
    if (result.valid) return [];
    const units = result.errors.filter((unit) => !WRAPPERS.has(unit.keyword));
    return (units.length ? units : result.errors).map(
      (unit) => `${pathOf(unit.instanceLocation)}: ${unit.keyword === "false" ? "not allowed" : unit.error}`,
    );
  };
}

// "#/tags/2" -> "input.tags[2]" (a JSON Pointer as the path the model reads).
function pathOf(pointer: string): string {
  return pointer
    .replace(/^#/, "")
    .split("/")
    .slice(1)
    .map((segment) => decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((path, key) => (/^\d+$/.test(key) ? `${path}[${key}]` : `${path}.${key}`), "input");
}
