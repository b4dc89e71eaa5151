// Every option an editor shows on hover has TSDoc: each property of each exported options type
// (`*Options`, `*Option`, `*Config`) of the package's entry points, and of the inline objects they hold.
// A failure lists the properties as `Type.path (file:line)`; `npx tsx spec/docs/optionDocs.ts` prints them too.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { optionProperties, undocumentedOptions } from "./optionDocs.js";

describe("TSDoc on the public options", () => {
  const all = optionProperties();

  it("finds the options of every entry point, nested inline objects included", () => {
    const names = all.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "LoomConfig.stores",
        "LoomConfig.execution",
        "StartOptions.executionId",
        "ModelCallOptions.temperature",
        "SecurityOptions.crypto.keys",
        "FsStoresOptions.dir",
        "IndexedDbStoresOptions.name",
        "PostgresStoresOptions.url",
        "WorkerOptions.effects",
        "InstrumentOptions.tracer",
        "ServeBridgeOptions.allowSend",
      ]),
    );
    expect(all.length).toBeGreaterThan(150);
  });

  it("leaves none without a doc comment", () => {
    const missing = all.filter((p) => !p.documented).map((p) => `${p.name} (${p.file}:${p.line})`);
    expect(missing, "write one sentence each, with @defaultValue where there is a default").toEqual([]);
  });
});

describe("the check itself", () => {
  const root = mkdtempSync(join(tmpdir(), "loomwork-option-docs-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "sub"));
  writeFileSync(
    join(root, "package.json"),
    JSON.stringify({
      name: "fixture",
      exports: { ".": { types: "./dist/index.d.ts" }, "./sub": { types: "./dist/sub/index.d.ts" } },
    }),
  );
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", types: [] } }),
  );
  writeFileSync(
    join(root, "index.ts"),
    [
      "export interface AOptions {",
      "  /** Documented. */",
      "  a: string;",
      "  b?: number;",
      "  /** Holds `named`. */",
      "  c?: { named: 1; unnamed: 2 };",
      "}",
      "interface Hidden {",
      "  /** @defaultValue 3 */",
      "  tagged?: number;",
      "  /** A sentence. @defaultValue 3 */",
      "  both?: number;",
      "  untagged?: number;",
      "  /** @internal */",
      "  seam?: 1;",
      "}",
      "export type { Hidden as BConfig };",
      "export interface NotAnOptionsType { x: 1 }",
    ].join("\n"),
  );
  writeFileSync(join(root, "sub", "index.ts"), "export type COption = boolean | { d?: string };\n");

  it("reports properties without a doc sentence (a tag alone is none), by entry point, through aliases and unions, @internal ones left out", () => {
    expect(undocumentedOptions(root).map((p) => `${p.name} ${p.file}:${p.line}`)).toEqual([
      "AOptions.b index.ts:4",
      "AOptions.c.unnamed index.ts:6",
      "BConfig.tagged index.ts:10",
      "BConfig.untagged index.ts:13",
      "COption.d sub/index.ts:1",
    ]);
  });
});
