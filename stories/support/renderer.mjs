// A worker thread's entry for stories/desktop-bridge.ts: registers tsx's loader in this thread, then runs
// the TypeScript renderer (the UI process of the story).
import { register } from "tsx/esm/api";

register();
await import("./renderer.ts");
