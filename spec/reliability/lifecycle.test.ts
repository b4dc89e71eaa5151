// Issue 13, "Export, erasure and the lifecycle": one regression test per bullet, through the public API.
// Each failed on the code before its fix (see the commit that added it).
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { agentLoop$ } from "../../actors/agents/agentLoop.js";
import { ErasureInProgressError } from "../../actors/lifecycle/erase.js";
import { ExecutionStoppedError } from "../../actors/errors.js";
import { tainted } from "../../machines/helpers/taint.js";
import { EncryptingContentStore } from "../../stores/encryptingContentStore.js";
import { SubjectErasedError } from "../../stores/errors.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import type { ContentStore } from "../../stores/types.js";
import { forgedEnvelope } from "../lifecycle/forgery.js";
import {
  canaryOf,
  CrashingEvents,
  offloaded,
  rejection,
  runAgent,
  SimulatedCrash,
  world,
} from "../lifecycle/support.js";
import { removeTempDirs, tempDir } from "./support.js";
import { archive, eraseSubject, exportSubject } from "../../lifecycle.js";

afterAll(removeTempDirs);

const MODES = [
  { mode: "plain", crypto: false },
  { mode: "sealed", crypto: true },
] as const;

/** A content store that records every address read from it. */
function spying(inner: ContentStore, reads: string[]): ContentStore {
  return Object.assign(Object.create(Object.getPrototypeOf(inner)) as ContentStore, inner, {
    get: (address: string, options?: { subject?: string }) => {
      reads.push(address);
      return inner.get(address, options);
    },
  });
}

describe("exportSubject resolves only the envelopes the claim-check wrote (ADR 0140 D11)", () => {
  for (const { mode, crypto } of MODES) {
    it(`${mode}: a forged envelope nested in A's tainted tool output is listed as data; B's blob is never read`, async () => {
      const reads: string[] = [];
      const w = world({
        crypto,
        content: (stores) =>
          spying(crypto ? new EncryptingContentStore(stores.content, stores.keys) : stores.content, reads),
      });
      const app = w.app();
      await runAgent(app, "b1", "B", ["fetch"]);
      const { fetch: bAddress } = await offloaded(app, "b1");
      // A's unlisted tool returns web content (tainted) that embeds a lookalike of B's envelope.
      w.outputs.set("A", tainted({ page: "<p>hi</p>", embedded: forgedEnvelope(bAddress!) }, "web"));
      await runAgent(app, "a1", "A", ["fetch", "note"]);
      const { fetch: aAddress } = await offloaded(app, "a1");
      reads.length = 0;

      const exported = await exportSubject(app, "A");
      expect(reads, "export read only A's own blob").toEqual([aAddress]);
      expect(exported.claimChecked.map((b) => b.address)).toEqual([aAddress]);
      expect(exported.claimChecked[0]!.value).toMatchObject({ owner: "A", canary: canaryOf("A") });
      expect(exported.unresolved).toEqual([{ address: bAddress, citedBy: ["a1"] }]);
      expect(JSON.stringify(exported)).not.toContain(canaryOf("B"));

      // The standalone export over bare stores (position only, no config) draws the same line.
      reads.length = 0;
      const bare = await exportSubject("A", { events: w.stores.events, keys: w.stores.keys, content: w.content });
      expect(bare.claimChecked.map((b) => b.address)).toEqual([aAddress]);
      expect(reads).toEqual([aAddress]);
    });
  }
});

describe("after an erasure the subject is erased in both modes", () => {
  for (const { mode, crypto } of MODES) {
    it(`${mode}: app.start and app.resume for the subject are refused with SubjectErasedError, nothing written`, async () => {
      const w = world({ crypto });
      const app = w.app();
      await runAgent(app, "a1", "A", ["fetch"]);
      await eraseSubject(app, "A");
      const before = JSON.stringify(await w.stores.events.listExecutions());
      const loop = agentLoop$({ id: "agent-fetch", model: "model", tools: ["fetch"], warnTranscriptBytes: false });
      for (const target of [app, w.app()]) {
        const started = await rejection(
          target.start(loop, { executionId: "a2", subject: "A", input: { prompt: "again" } }),
        );
        expect(started, `${mode}: start after the erasure`).toBeInstanceOf(SubjectErasedError);
        expect((started as SubjectErasedError).subject).toBe("A");
        const resumed = await rejection(target.resume("a1"));
        expect(resumed, `${mode}: resume after the erasure`).toBeInstanceOf(SubjectErasedError);
        expect(await w.stores.events.head("a2")).toBe(0);
      }
      expect(JSON.stringify(await w.stores.events.listExecutions())).toBe(before);
      // Another subject is unaffected.
      await runAgent(app, "b1", "B", ["fetch"]);
      expect(await app.result("b1")).toMatchObject({ text: "done" });
    });

    it(`${mode}: app.result of an erased execution rejects in the app that erased it, as in a fresh app`, async () => {
      const w = world({ crypto });
      const app = w.app();
      await runAgent(app, "a1", "A", ["fetch"]);
      expect(await app.result("a1")).toMatchObject({ text: "done" });
      // The read models are not touched first: awaiting their hydration once hid that the outcome was kept
      // whenever the app had not created them (spec/lifecycle/inMemoryCopies.test.ts covers the read models).
      await eraseSubject(app, "A");
      for (const [label, target] of [
        ["same app", app],
        ["fresh app", w.app()],
      ] as const) {
        const error = await rejection(target.result("a1"));
        expect(error, `${mode}, ${label}`).toBeInstanceOf(SubjectErasedError);
        expect(JSON.stringify(error), label).not.toContain("done");
      }
    });
  }
});

describe("a stopped, then archived, execution stays stopped (one fold for recovery, archive and stats)", () => {
  it("resumes stopped with nothing re-run, and its snapshot and stats say stopped", async () => {
    let calls = 0;
    let reached!: () => void;
    const parked = new Promise<void>((resolve) => (reached = resolve));
    const w = world({
      snapshotEvery: false,
      beforeAnswer: (ctx) => {
        calls++;
        reached();
        return new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }),
        );
      },
    });
    const app = w.app();
    const loop = agentLoop$({ id: "agent-fetch", model: "model", tools: ["fetch"], warnTranscriptBytes: false });
    await app.start(loop, { executionId: "s1", subject: "A", input: { prompt: "go" } });
    await parked;
    await app.stop("s1");
    const stoppedStats = await w.app().stats("s1");
    const { snapshotSeq } = await archive(app, "s1");
    const head = await w.stores.events.head("s1");
    expect(snapshotSeq).toBe(head);
    expect(((await w.stores.events.getSnapshot("s1"))!.state as { status: string }).status).toBe("stopped");

    const fresh = w.app();
    await fresh.resume("s1");
    expect(await rejection(fresh.result("s1"))).toBeInstanceOf(ExecutionStoppedError);
    await fresh.close();
    expect(calls, "the pending model call was not run again").toBe(1);
    expect(await w.stores.events.head("s1"), "nothing appended").toBe(head);
    expect((await w.app().log("s1")).filter((r) => r.type === EXECUTION_ENDED)).toHaveLength(1);
    expect((await w.app().stats("s1")).stateBytes).toBe(stoppedStats.stateBytes);
  });
});

describe("the erasure-in-progress guard finds the coordinator of a subject whose id needs URI-encoding", () => {
  const SUBJECT = "user@example.com/ü 1";
  for (const { mode, crypto } of MODES) {
    it(`${mode}: start and resume are refused with LOOM_ERASURE_IN_PROGRESS while the erasure is unfinished, then SubjectErasedError once finished`, async () => {
      const w = world({ crypto });
      const app = w.app();
      await runAgent(app, "u1", SUBJECT, ["fetch"]);
      // The erasure dies right after its intent is journaled (before the shred): the coordinator stays running.
      const dying = new CrashingEvents(w.stores.events, { prefix: "loom.erase:", at: 3, mode: "after" });
      expect(await rejection(eraseSubject(w.app({ events: dying }), SUBJECT))).toBeInstanceOf(SimulatedCrash);
      const running = (await w.stores.events.listExecutions()).filter(
        (i) => i.executionId.startsWith("loom.erase:") && i.status === "running",
      );
      expect(running.map((i) => i.executionId)).toEqual([`loom.erase:${encodeURIComponent(SUBJECT)}:1`]);

      const fresh = w.app();
      const loop = agentLoop$({ id: "agent-fetch", model: "model", tools: ["fetch"], warnTranscriptBytes: false });
      const started = await rejection(
        fresh.start(loop, { executionId: "u2", subject: SUBJECT, input: { prompt: "more" } }),
      );
      expect(started).toBeInstanceOf(ErasureInProgressError);
      expect(started).toMatchObject({
        code: "LOOM_ERASURE_IN_PROGRESS",
        subject: SUBJECT,
        coordinatorId: running[0]!.executionId,
      });
      const resumed = await rejection(fresh.resume("u1"));
      expect(resumed).toMatchObject({ code: "LOOM_ERASURE_IN_PROGRESS", subject: SUBJECT });
      expect(await w.stores.events.head("u2")).toBe(0);

      await eraseSubject(fresh, SUBJECT);
      expect(
        await rejection(fresh.start(loop, { executionId: "u2", subject: SUBJECT, input: { prompt: "more" } })),
      ).toBeInstanceOf(SubjectErasedError);
      expect(await w.stores.events.head("u2")).toBe(0);
    });
  }
});

describe("loomwork run never deletes a directory it did not create", () => {
  const repo = process.cwd();
  const run = (args: string[], cwd: string) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
      delete env.LOOMWORK_DIR;
      execFile(
        process.execPath,
        [
          "--import",
          pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href,
          join(repo, "cli/main.ts"),
          ...args,
        ],
        { cwd, env, encoding: "utf8" },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      );
    });

  it("erase-and-export refuses a non-empty --dir it does not own, and the default ./.loomwork holding a user's journal; it leaves them as they were", async () => {
    const root = await tempDir("story-dir");
    const userDir = join(root, "my-journal");
    await mkdir(join(userDir, "executions"), { recursive: true });
    await writeFile(join(userDir, "executions", "precious.txt"), "the user's data\n");
    const given = await run(["run", "erase-and-export", "--dir", userDir], root);
    expect(given.code).not.toBe(0);
    expect(given.out).toContain(userDir);
    expect(given.out).toMatch(/LOOM_STORY_DIR_NOT_OWNED/);
    expect(await readFile(join(userDir, "executions", "precious.txt"), "utf8")).toBe("the user's data\n");
    expect(await readdir(userDir)).toEqual(["executions"]);
    expect(await readdir(root), "nothing written beside it").toEqual(["my-journal"]);

    const cwd = join(root, "project");
    await mkdir(join(cwd, ".loomwork"), { recursive: true });
    await writeFile(join(cwd, ".loomwork", "catalogue.json"), "{}\n");
    const byDefault = await run(["run", "erase-and-export"], cwd);
    expect(byDefault.code).not.toBe(0);
    expect(byDefault.out).toMatch(/LOOM_STORY_DIR_NOT_OWNED/);
    expect(await readdir(join(cwd, ".loomwork"))).toEqual(["catalogue.json"]);
  }, 60_000);

  it("erase-and-export runs in an empty --dir it then owns, and reruns there", async () => {
    const root = await tempDir("story-own");
    const dir = join(root, "fresh");
    for (let i = 0; i < 2; i++) {
      const { code, out } = await run(["run", "erase-and-export", "--dir", dir], root);
      expect(out).toContain("her canary on disk: found in no file");
      expect(code, out).toBe(0);
    }
    expect(await readdir(root), "nothing written beside it").toEqual(["fresh"]);
  }, 60_000);
});
