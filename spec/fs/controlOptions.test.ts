// serveControl's options checked before anything is written: a bad option is a typed error naming it,
// and no socket file appears anywhere.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fsStores, serveControl, type ControlServer, type FsStores } from "../../adapters/fs/index.js";
import { createApp, defineConfig, type App } from "../../index.js";
import { LoomworkError } from "../../stores/errors.js";
import { removeTempDirs, tempDir } from "./helpers.js";

afterAll(removeTempDirs);

describe("serveControl refuses bad options with a typed error, writing nothing", () => {
  let dir: string;
  let stores: FsStores;
  let app: App;
  let cwd: string;
  const served: ControlServer[] = [];

  beforeAll(async () => {
    dir = await tempDir("control-options");
    stores = await fsStores({ dir: join(dir, "journal") });
    app = createApp(defineConfig({ stores, effects: {} }));
    // `dir: ""` would serve the working directory: the test runs in an empty one to see what appears there.
    cwd = process.cwd();
    process.chdir(await tempDir("control-cwd"));
  });
  afterAll(async () => {
    process.chdir(cwd);
    for (const server of served) await server.close();
    await app.close();
    await stores.close();
  });

  // A server that should not exist is closed at the end, so one failure does not leave a socket behind.
  const attempt = async (run: () => Promise<ControlServer>): Promise<unknown> => {
    try {
      served.push(await run());
      return undefined;
    } catch (error) {
      return error;
    }
  };

  it.each([
    ["no options", () => serveControl(app, undefined as never), "options"],
    ["an empty dir", () => serveControl(app, { dir: "" }), "dir"],
    ["a dir that is not a string", () => serveControl(app, { dir: 42 as never }), "dir"],
    ['allow: "yes"', () => serveControl(app, { dir: stores.dir, allow: "yes" as never }), "allow"],
    ["an app without resume, stop and stream", () => serveControl({} as never, { dir: stores.dir }), "app"],
  ])("%s", async (_label, run, option) => {
    const error = await attempt(run);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(LoomworkError);
    expect(error).toMatchObject({
      code: "LOOM_CONTROL_OPTIONS",
      option,
      message: expect.stringContaining(`serveControl: ${option}`),
    });
    expect(await readdir(process.cwd())).toEqual([]);
    expect((await readdir(stores.dir)).filter((name) => name.endsWith(".sock"))).toEqual([]);
  });

  it("a dir that does not exist", async () => {
    const missing = join(dir, "no-such-journal");
    const error = await attempt(() => serveControl(app, { dir: missing }));
    expect(error).toBeInstanceOf(LoomworkError);
    expect(error).toMatchObject({ code: "LOOM_CONTROL_SOCKET", message: expect.stringContaining(missing) });
    expect(await readdir(dir)).toEqual(["journal"]);
  });
});
