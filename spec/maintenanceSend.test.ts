// The runtime's own executions (the sweep, the erase coordinator) run machines whose log is an audit trail:
// no external sender may add an event to it, through the actor or anything that goes through the actor
// (the bridge, the control socket). Checked on the actor itself, with the real maintenance machine.
import { describe, expect, it } from "vitest";
import { createActor, createMachine } from "xstate";
import { JournaledActor, type ActorSource } from "../actors/journal/actor.js";
import { ERROR_CODES } from "../actors/constants.js";
import { sweepMachine } from "../machines/sweep.js";

function source(machine: ActorSource["machine"], sent: unknown[]): ActorSource {
  const actor = createActor(machine);
  return {
    executionId: `${machine.id}:1`,
    sessionId: "s",
    machine,
    replay: { replayedRecords: 0, servedSteps: 0 } as unknown as ActorSource["replay"],
    getSnapshot: () => actor.getSnapshot(),
    subscribe: (observer) => actor.subscribe(observer as never),
    send: async (event) => void sent.push(event),
    whenSettled: async () => {},
  };
}

describe("the runtime's own executions take no external events", () => {
  it("a send to the sweep's execution is refused with ConfigError send.executionId; nothing reaches its mailbox", async () => {
    const sent: unknown[] = [];
    const actor = new JournaledActor(source(sweepMachine, sent));
    const error = await actor.sendAsync({ type: "ANYTHING" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ERROR_CODES.config, path: "send.executionId" });
    expect(sent).toEqual([]);
  });

  it("a user machine's execution still takes its own events", async () => {
    const sent: unknown[] = [];
    const actor = new JournaledActor(source(createMachine({ id: "user" }), sent));
    await actor.sendAsync({ type: "ANYTHING" });
    expect(sent).toEqual([{ type: "ANYTHING" }]);
  });
});
