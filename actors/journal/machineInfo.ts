// Static facts read off a machine definition (no running): which effects it names.
import type { AnyStateMachine } from "xstate";

interface NodeLike {
  invoke?: { src?: unknown }[];
  states?: Record<string, NodeLike>;
}

/** Every effect name the machine can invoke: string invoke sources and the actors declared in setup(). */
export function effectSourcesOf(machine: AnyStateMachine): string[] {
  const names = new Set<string>(Object.keys((machine.implementations?.actors ?? {}) as object));
  const walk = (node: NodeLike) => {
    for (const invoke of node.invoke ?? []) if (typeof invoke.src === "string") names.add(invoke.src);
    for (const child of Object.values(node.states ?? {})) walk(child);
  };
  walk(machine.root as unknown as NodeLike);
  return [...names];
}
