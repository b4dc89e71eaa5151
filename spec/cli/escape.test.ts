// What the CLI prints from a journal is data, never terminal commands: an execution id, a subject, a logic
// id, a value or a live model delta carrying escape sequences is printed with them escaped, visibly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deltaSinkOf } from "../../actors/agents/deltas.js";
import { fsStores, serveControl, type ControlServer, type FsStores } from "../../adapters/fs/index.js";
import { agentLoop$, createApp, createLlmEffect, defineConfig, type App, type Model } from "../../index.js";
import { tempDirs } from "../support/tempDirs.js";
import { cli, spawnCli, type CliResult } from "./support.js";

const { tempDir, removeTempDirs } = tempDirs("cli-escape");
afterAll(removeTempDirs);

// Retitles the terminal (OSC 0 ... BEL), clears it (CSI 2 J), a C1 CSI, DEL, a backspace and a carriage return.
const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u007f\b\r";
// Every control character but the newline that ends a line: none may reach the terminal from the journal.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const ID = `chat${HOSTILE}1`;

const clean = (result: CliResult | { stdout: string; stderr: string }, label: string) => {
  expect(CONTROL.exec(result.stdout)?.[0] ?? "none", `${label} stdout:\n${JSON.stringify(result.stdout)}`).toBe("none");
  expect(CONTROL.exec(result.stderr)?.[0] ?? "none", `${label} stderr:\n${JSON.stringify(result.stderr)}`).toBe("none");
};

describe("the CLI escapes control characters in everything it prints from a journal", () => {
  let dir: string;
  let stores: FsStores;
  let app: App;
  let control: ControlServer;
  let release: () => void = () => undefined;
  const streaming: Model = {
    id: "streaming",
    async generate(_request, ctx) {
      deltaSinkOf(ctx)?.({ type: "text-delta", delta: `Owls${HOSTILE}\nhunt` });
      await new Promise<void>((resolve) => (release = resolve));
      return { text: `Owls hunt${HOSTILE}` };
    },
  };
  const assistant = agentLoop$({ id: "assistant", model: "model", tools: [] });

  beforeAll(async () => {
    dir = await tempDir("journal");
    stores = await fsStores({ dir });
    app = createApp(defineConfig({ stores, logics: [assistant], effects: { model: createLlmEffect(streaming) } }));
    control = await serveControl(app, { dir: stores.dir });
  });
  afterAll(async () => {
    release();
    await control.close();
    await app.close();
    await stores.close();
  });

  it("follow: the records and the live deltas", async () => {
    await app.start(assistant, { executionId: ID, subject: `user${HOSTILE}`, input: { prompt: `hi${HOSTILE}` } });
    const following = spawnCli(["follow", ID, "--dir", dir]);
    await following.waitFor("hunt");
    release();
    expect(await following.exited).toBe(0);
    clean(following, "follow");
    expect(following.stdout).toContain("Owls\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u007f\\b\\r\nhunt");
  });

  it("ls, log, stats and approvals, as text and as JSON", async () => {
    await app.result(ID);
    for (const args of [
      ["ls"],
      ["log", ID],
      ["log", ID, "--full"],
      ["stats"],
      ["approvals"],
      ["ls", "--json"],
      ["log", ID, "--json"],
      ["log", `nope${HOSTILE}`],
    ]) {
      const result = await cli([...args, "--dir", dir]);
      clean(result, args.join(" "));
    }
    const listed = await cli(["ls", "--dir", dir]);
    expect(listed.stdout).toContain("chat\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u007f\\b\\r1");
    // The JSON is still the journal's: parsed back, the id is the one the app wrote.
    expect(JSON.parse((await cli(["ls", "--json", "--dir", dir])).stdout)[0].executionId).toBe(ID);
  });
});
