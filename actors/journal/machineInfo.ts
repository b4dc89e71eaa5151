// Static facts read off a machine definition (no running): which effects it names.
import type { AnyStateMachine, AnyStateNode } from "xstate";

/** Every effect name the machine can invoke: string invoke sources and the actors declared in setup(). */
export function effectSourcesOf(machine: AnyStateMachine): string[] {
  const names = new Set<string>(Object.keys(machine.implementations?.actors ?? {}));
  const walk = (node: AnyStateNode) => {
    for (const invoke of node.invoke ?? []) if (typeof invoke.src === "string") names.add(invoke.src);
    for (const child of Object.values(node.states ?? {})) walk(child);
  };
  walk(machine.root);
  return [...names];
}
