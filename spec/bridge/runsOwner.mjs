// A worker thread's entry: registers tsx's loader in this thread, then runs the TypeScript owner.
import { register } from "tsx/esm/api";

register();
await import("./runsOwner.ts");
