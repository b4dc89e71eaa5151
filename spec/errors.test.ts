// The error taxonomy: every exported error class is a LoomworkError with a code from ERROR_CODES, each code
// belongs to one class, and the TypeError-compatible ones stay `instanceof TypeError`.
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import * as loomwork from "../index.js";
import {
  AiSdkReplyError,
  ConfigError,
  ERROR_CODES,
  LoomworkError,
  LoomworkTypeError,
  WARNING_CODES,
} from "../index.js";
import { BridgeDisconnectedError, BridgeSendError } from "../adapters/bridge/index.js";
import { IndexedDbConnectionError } from "../adapters/indexeddb/errors.js";
import { CliError, NotFoundError, UsageError } from "../cli/errors.js";

describe("errors", () => {
  it("defines each error code once", () => {
    const codes = Object.values(ERROR_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of [...codes, ...Object.values(WARNING_CODES)]) expect(code).toMatch(/^LOOM_[A-Z_]+$/);
  });

  it("exports only error classes that extend LoomworkError (directly or through LoomworkTypeError)", () => {
    const classes = Object.entries(loomwork).filter(
      ([name, value]) => typeof value === "function" && name.endsWith("Error"),
    );
    expect(classes.length).toBeGreaterThan(25);
    for (const [name, value] of classes) {
      const proto = (value as { prototype: unknown }).prototype;
      expect(proto instanceof LoomworkError || value === LoomworkError, name).toBe(true);
    }
  });

  it("keeps ConfigError and AiSdkReplyError instanceof TypeError, and makes them LoomworkErrors with a code", () => {
    const config = new ConfigError("execution.snapshotEvery", "a positive integer.");
    const reply = new AiSdkReplyError("not JSON");
    for (const error of [config, reply]) {
      expect(error).toBeInstanceOf(TypeError);
      expect(error).toBeInstanceOf(LoomworkTypeError);
      expect(error).toBeInstanceOf(LoomworkError);
    }
    expect(config).toMatchObject({ name: "ConfigError", code: ERROR_CODES.config, path: "execution.snapshotEvery" });
    expect(reply).toMatchObject({ name: "AiSdkReplyError", code: ERROR_CODES.aiSdkReply });
    // A subclass keeps the ordinary check: the mark answers only for LoomworkError itself.
    expect(config).not.toBeInstanceOf(loomwork.ConcurrencyError);
    expect(new TypeError("plain")).not.toBeInstanceOf(LoomworkError);
    expect(new Error("plain")).not.toBeInstanceOf(LoomworkError);
  });

  it("recognises a LoomworkError from another copy of the package by its mark", () => {
    const foreign = Object.create(Object.getPrototypeOf(new loomwork.ConcurrencyError("e", 1, 2)) as object) as object;
    expect(foreign).toBeInstanceOf(LoomworkError);
    const marked = Object.assign(Object.create(Error.prototype) as object, { [Symbol.for("loomwork.error")]: true });
    expect(marked).toBeInstanceOf(LoomworkError);
  });

  it("gives the adapters' and the CLI's errors codes too", () => {
    expect(new IndexedDbConnectionError("db", "closed")).toMatchObject({ code: ERROR_CODES.indexedDbConnection });
    for (const error of [new CliError("x", 1), new UsageError("x"), new NotFoundError("x")])
      expect(error).toBeInstanceOf(LoomworkError);
    expect(new UsageError("x")).toMatchObject({ name: "UsageError", code: "LOOM_CLI_USAGE", exitCode: 2 });
    for (const error of [new BridgeSendError({ name: "X", message: "x" }), new BridgeDisconnectedError("e1", "GO")])
      expect(error).toBeInstanceOf(LoomworkError);
    expect(new BridgeDisconnectedError("e1", "GO")).toMatchObject({
      name: "BridgeDisconnectedError",
      code: ERROR_CODES.bridgeDisconnected,
      executionId: "e1",
    });
  });
});

// Error names must survive a minifier: a class's own name (`new.target.name`) becomes "Ea" or "gi" in a
// minified app, so every error class declares its name as a string (`static override readonly name: string = "..."`).
// A static field is an own, enumerable property of the class; the name a minifier rewrites is the
// function's built-in one (not enumerable), so a class that does not declare its name is told apart here.
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SOURCE_DIRS = ["actors", "stores", "adapters", "cli", "machines"];

/** Every public entry point (package.json "exports"), as the source module it is built from. */
function publicEntryPoints(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, string | { import?: string }>;
  };
  return Object.values(pkg.exports)
    .map((target) => (typeof target === "string" ? target : target.import))
    .filter((path): path is string => typeof path === "string" && path.startsWith("./dist/") && path.endsWith(".js"))
    .map((path) => join(ROOT, path.slice("./dist/".length).replace(/\.js$/, ".ts")));
}

/** Every source module that declares a class extending another, public or not (the CLI's, the adapters' internals). */
function modulesDeclaringClasses(): string[] {
  return SOURCE_DIRS.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" }).map((path) => join(ROOT, dir, path)),
  )
    .filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))
    .filter((path) => /\bclass\s+\w+\s+extends\s/.test(readFileSync(path, "utf8")));
}

type ErrorClass = (abstract new (...args: never[]) => Error) & { name: string };

function errorClassesOf(module: Record<string, unknown>): [string, ErrorClass][] {
  return Object.entries(module).filter((entry): entry is [string, ErrorClass] => {
    const value = entry[1];
    return (
      typeof value === "function" && (value === Error || (value as { prototype?: unknown }).prototype instanceof Error)
    );
  });
}

describe("error names that survive a minifier", () => {
  it("every error class of every entry point and source module declares its name as a string equal to its export name", async () => {
    const modules = [...new Set([...publicEntryPoints(), ...modulesDeclaringClasses()])];
    expect(modules).toEqual(
      expect.arrayContaining([
        join(ROOT, "index.ts"),
        join(ROOT, "cli/errors.ts"),
        join(ROOT, "adapters/indexeddb/errors.ts"),
      ]),
    );
    const undeclared: string[] = [];
    const seen = new Set<ErrorClass>();
    for (const path of modules) {
      const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
      for (const [exported, cls] of errorClassesOf(module)) {
        if (seen.has(cls)) continue;
        seen.add(cls);
        const own = Object.getOwnPropertyDescriptor(cls, "name");
        if (own?.enumerable !== true || own.value !== exported) {
          undeclared.push(
            `${exported} (${relative(ROOT, path)}): add \`static override readonly name: string = "${exported}";\``,
          );
        }
      }
    }
    expect(seen.size).toBeGreaterThan(40);
    expect(undeclared).toEqual([]);
  }, 60_000);

  it("a minified bundle of the package entry throws errors whose name is their class's name", async () => {
    const { build } = await import("esbuild");
    const dir = await mkdtemp(join(tmpdir(), "loomwork-minified-"));
    try {
      const outfile = join(dir, "index.mjs");
      await build({
        entryPoints: [join(ROOT, "index.ts")],
        bundle: true,
        minify: true,
        keepNames: false,
        format: "esm",
        platform: "browser",
        target: "es2022",
        outfile,
        logLevel: "silent",
      });
      const minified = (await import(pathToFileURL(outfile).href)) as typeof loomwork;
      // The bundle is minified: a class that relied on its own name would be renamed.
      expect(readFileSync(outfile, "utf8")).not.toMatch(/class ConcurrencyError\b/);
      const thrown = await minified
        .memoryStores()
        .events.append("e1", 3, [])
        .catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(minified.ConcurrencyError);
      expect(thrown).toMatchObject({ name: "ConcurrencyError", code: ERROR_CODES.concurrency });
      expect(String(thrown)).toMatch(/^ConcurrencyError: Execution "e1"/);
      expect(new minified.ConfigError("execution.snapshotEvery", "a positive integer.").name).toBe("ConfigError");
      const classes = errorClassesOf(minified as unknown as Record<string, unknown>);
      expect(classes.length).toBeGreaterThan(25);
      expect(
        classes
          .filter(([exported, cls]) => cls.name !== exported)
          .map(([exported, cls]) => `${exported} is named ${cls.name}`),
      ).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
