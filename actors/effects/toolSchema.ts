// A tool's input schema: a Standard Schema (zod 4, valibot, arktype), an AI SDK schema (`jsonSchema()`,
// `zodSchema()`) or a plain JSON Schema, resolved once into the JSON Schema the model receives and the
// validation the input meets before the tool runs.
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
  return {
    jsonSchema,
    async validate(input) {
      const problems = checkJsonSchema(jsonSchema, input, "input");
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

const TYPE_OF: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  null: (v) => v === null,
  array: Array.isArray,
  object: isObject,
};

/**
 * The subset of JSON Schema a plain schema is checked with (the model receives it whole): `type`, `enum`,
 * `const`, `properties`, `required`, `additionalProperties: false`, `items`, `minLength`, `maxLength`,
 * `minimum`, `maximum`. Other keywords are not checked.
 */
export function checkJsonSchema(schema: unknown, value: unknown, at: string): string[] {
  if (!isObject(schema)) return [];
  const types =
    typeof schema.type === "string"
      ? [schema.type]
      : Array.isArray(schema.type)
        ? schema.type.filter((t): t is string => typeof t === "string")
        : [];
  if (types.length && !types.some((t) => TYPE_OF[t]?.(value) ?? true))
    return [
      `${at}: expected ${types.join(" or ")}, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}`,
    ];
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    return [`${at}: expected one of ${JSON.stringify(schema.enum)}`];
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
    return [`${at}: expected ${JSON.stringify(schema.const)}`];
  const problems: string[] = [];
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength)
      problems.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength)
      problems.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) problems.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) problems.push(`${at}: above ${schema.maximum}`);
  }
  if (Array.isArray(value) && isObject(schema.items))
    value.forEach((item, i) => problems.push(...checkJsonSchema(schema.items, item, `${at}[${i}]`)));
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const key of Array.isArray(schema.required) ? schema.required : []) {
      if (typeof key === "string" && !(key in value)) problems.push(`${at}.${key}: required`);
    }
    for (const [key, v] of Object.entries(value)) {
      if (key in properties) problems.push(...checkJsonSchema(properties[key], v, `${at}.${key}`));
      else if (schema.additionalProperties === false) problems.push(`${at}.${key}: not allowed`);
    }
  }
  return problems;
}
