// The error taxonomy: every exported error class is a LoomworkError with a code from ERROR_CODES, each code
// belongs to one class, and the TypeError-compatible ones stay `instanceof TypeError`.
import { describe, expect, it } from "vitest";
import * as loomwork from "../index.js";
import { AiSdkReplyError, ConfigError, ERROR_CODES, LoomworkError, LoomworkTypeError, WARNING_CODES } from "../index.js";
import { IndexedDbConnectionError } from "../adapters/indexeddb/errors.js";
import { CliError, NotFoundError, UsageError } from "../cli/errors.js";

describe("errors", () => {
  it("defines each error code once", () => {
    const codes = Object.values(ERROR_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of [...codes, ...Object.values(WARNING_CODES)]) expect(code).toMatch(/^LOOM_[A-Z_]+$/);
  });

  it("exports only error classes that extend LoomworkError (directly or through LoomworkTypeError)", () => {
    const classes = Object.entries(loomwork).filter(([name, value]) => typeof value === "function" && name.endsWith("Error"));
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
    for (const error of [new CliError("x", 1), new UsageError("x"), new NotFoundError("x")]) expect(error).toBeInstanceOf(LoomworkError);
    expect(new UsageError("x")).toMatchObject({ name: "UsageError", code: "LOOM_CLI_USAGE", exitCode: 2 });
  });
});
