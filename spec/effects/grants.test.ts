// capabilities.grants: which effects a logic may call. A call outside its grant is refused, typed and journaled.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { GrantDeniedError } from "../../actors/effects/ringLayers.js";
import { defineConfig } from "../../actors/config.js";
import { createToolEffect } from "../../actors/effects/effect.js";
import { ExecutionFailedError } from "../../actors/errors.js";
import { memoryStores } from "../../stores/memory.js";
import { EXECUTION_ENDED, STEP_COMPLETED, STEP_FAILED } from "../../stores/schema.js";
import { oneStep, recordsOf } from "./helpers.js";

function grantedApp(grants: Record<string, string[]>) {
  const ran: string[] = [];
  const tool = (name: string) =>
    createToolEffect(async () => {
      ran.push(name);
      return `${name} ok`;
    });
  const app = createApp(
    defineConfig({
      stores: memoryStores(),
      effects: { search: tool("search"), deleteAll: tool("deleteAll") },
      capabilities: { grants },
    }),
  );
  return { app, ran };
}

describe("grants", () => {
  it("refuses a call outside the logic's grant with GrantDeniedError: journaled, the effect never ran, the execution ends with it", async () => {
    const { app, ran } = grantedApp({ researcher: ["search"] });
    await app.start(oneStep("deleteAll", { id: "researcher" }), { executionId: "g" });
    const error = await app.result("g").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionFailedError);
    expect((error as ExecutionFailedError).error).toMatchObject({
      name: "GrantDeniedError",
      code: "LOOM_GRANT_DENIED",
      logicId: "researcher",
      effectId: "deleteAll",
    });
    expect(ran).toEqual([]);
    const log = await app.log("g");
    expect(log.filter((r) => r.type === STEP_COMPLETED)).toEqual([]);
    expect(log.find((r) => r.type === STEP_FAILED)).toMatchObject({
      stepId: "researcher#deleteAll:1",
      stoppedAt: "capabilities",
      error: { name: "GrantDeniedError" },
    });
    expect(log.at(-1)).toMatchObject({ type: EXECUTION_ENDED, status: "error", error: { name: "GrantDeniedError" } });
    expect((log.at(-1)!.error as { message: string }).message).toMatch(
      /capabilities\.grants\["researcher"\] grants search\. Add "deleteAll"/,
    );
  });

  it("lets a granted call through", async () => {
    const { app, ran } = grantedApp({ researcher: ["search"] });
    await app.start(oneStep("search", { id: "researcher" }), { executionId: "ok" });
    await app.result("ok");
    expect(ran).toEqual(["search"]);
  });

  it('applies "*" to logics not listed, and leaves a logic unrestricted when neither names it', async () => {
    const star = grantedApp({ researcher: ["search", "deleteAll"], "*": ["search"] });
    await star.app.start(oneStep("deleteAll", { id: "other" }), { executionId: "s" });
    await expect(star.app.result("s")).rejects.toMatchObject({
      error: { name: "GrantDeniedError", message: expect.stringContaining('grants["*"]') },
    });
    await star.app.start(oneStep("deleteAll", { id: "researcher" }), { executionId: "r" });
    await star.app.result("r");
    expect(star.ran).toEqual(["deleteAll"]);

    const open = grantedApp({ researcher: ["search"] });
    await open.app.start(oneStep("deleteAll", { id: "janitor" }), { executionId: "j" });
    await open.app.result("j");
    expect(open.ran).toEqual(["deleteAll"]);
  });

  it("lets the machine handle the refusal like any effect error", async () => {
    const { app } = grantedApp({ researcher: [] });
    await app.start(oneStep("search", { id: "researcher", handleError: true }), { executionId: "h" });
    expect(await app.result("h")).toMatchObject({ error: { name: "GrantDeniedError" } });
    expect((await recordsOf(app, "h", EXECUTION_ENDED))[0]).toMatchObject({ status: "done" });
  });

  it("does not apply to invokeTransient (there is no logic)", async () => {
    const { app, ran } = grantedApp({ "*": [] });
    expect(await app.invokeTransient("deleteAll", {})).toBe("deleteAll ok");
    expect(ran).toEqual(["deleteAll"]);
  });

  it("is a typed, exported error with the facts as fields", () => {
    const error = new GrantDeniedError("researcher", "deleteAll", ["search"], "researcher");
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "GrantDeniedError",
      code: "LOOM_GRANT_DENIED",
      logicId: "researcher",
      effectId: "deleteAll",
    });
  });
});
