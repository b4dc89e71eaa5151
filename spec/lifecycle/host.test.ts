// The lifecycle host (actors/lifecycle/host.ts) keeps what the lifecycle holds per app: the sweep and the
// erasures in flight. A second call joins the first in the same app; another app has its own.
import { describe, expect, it } from "vitest";
import { createApp } from "../../actors/app.js";
import { defineConfig } from "../../actors/config.js";
import { memoryStores } from "../../stores/memory.js";
import { eraseSubject, sweep } from "../../lifecycle.js";

const appOver = (stores = memoryStores()) =>
  createApp(defineConfig({ stores, effects: {}, compliance: { erase: true } }));

describe("the lifecycle host keeps its state per app", () => {
  it("a sweep joins the sweep of its own app, never another app's", async () => {
    const [a, b] = [appOver(), appOver()];
    const first = sweep(a, { ttlMs: 0 });
    expect(sweep(a, { ttlMs: 0 })).toBe(first);
    const other = sweep(b, { ttlMs: 0 });
    expect(other).not.toBe(first);
    await Promise.all([first, other]);
    // Once it ended, a new call runs a new sweep.
    const next = sweep(a, { ttlMs: 0 });
    expect(next).not.toBe(first);
    await next;
    await Promise.all([a.close(), b.close()]);
  });

  it("an erasure joins the erasure of the same subject in its own app only", async () => {
    const [a, b] = [appOver(), appOver()];
    const first = eraseSubject(a, "user-1");
    expect(eraseSubject(a, "user-1")).toBe(first);
    const otherSubject = eraseSubject(a, "user-2");
    const otherApp = eraseSubject(b, "user-1");
    expect(otherSubject).not.toBe(first);
    expect(otherApp).not.toBe(first);
    await Promise.all([first, otherSubject, otherApp]);
    await Promise.all([a.close(), b.close()]);
  });
});
