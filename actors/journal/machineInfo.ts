// Static facts read off a machine definition (no running): which effects it names.
import type { AnyStateMachine, AnyStateNode } from "xstate";

// A definition is immutable: its effect names are read once per machine, not at every app's first start
// of it (an app per request, as on a serverless host, would walk every state node each time).
const sources = new WeakMap<AnyStateMachine, readonly string[]>();

/** Every effect name the machine can invoke: string invoke sources and the actors declared in setup(). */
export function effectSourcesOf(machine: AnyStateMachine): readonly string[] {
  let known = sources.get(machine);
  if (known) return known;
  const names = new Set<string>(Object.keys(machine.implementations?.actors ?? {}));
  const walk = (node: AnyStateNode) => {
    for (const invoke of node.invoke ?? []) if (typeof invoke.src === "string") names.add(invoke.src);
    for (const child of Object.values(node.states ?? {})) walk(child);
  };
  walk(machine.root);
  known = Object.freeze([...names]);
  sources.set(machine, known);
  return known;
}
