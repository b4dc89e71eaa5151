// A module the replay-check CLI test loads with --logic: the flow unchanged, and with a review step.
import { flow } from "./support.js";

export const plain = flow();
export const review = flow({ shape: "review" });
