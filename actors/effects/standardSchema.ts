// The Standard Schema (https://standardschema.dev) and Standard JSON Schema interfaces, as structural types:
// zod 4, valibot and arktype schemas satisfy them; loomwork depends on none of them.

/** A Standard Schema v1: what zod 4, valibot and arktype schemas implement. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

/** The `~standard` property of a schema. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  /** The Standard JSON Schema extension (zod >= 4.2, arktype, valibot's adapter): the schema as JSON Schema. */
  readonly jsonSchema?: { readonly input: (options: { readonly target: string }) => Record<string, unknown> };
}

/** What `validate` returns. */
export type StandardSchemaResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

/** One validation problem. */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The input type a schema accepts. */
export type InferSchemaInput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["input"];
/** The output type a schema validates to. */
export type InferSchemaOutput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];
