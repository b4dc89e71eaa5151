// The app's one warning path. Every runtime warning is built as a `Warning` with a code from
// WARNING_CODES and handed to the app's sink, which is the only emitter of the bus's "warn" event: the
// bus hears it (`app.on("warn")`), then one listener does, the first of the warning's own (agentLoop$'s
// `onWarn`), the app's `observability.onWarn`, and the warning's default (configureAgentLoopDefaults).
// A warning no listener heard goes to the process warning channel when its origin says so (agentLoop$'s
// do: they were process warnings before the app had a sink). A throwing listener never fails a run.
// docs/observability.md, "Warnings", lists the codes and where each comes from.
import { createBus, processWarning, type RuntimeBus, type Warning } from "./bus.js";
import { WARNING_CODES } from "./constants.js";

type Listener = (warning: Warning) => void;

/** Who hears a warning beside the bus, when the app's `observability.onWarn` is not the only candidate. */
export interface WarningRoute {
  /** Takes the warning instead of `observability.onWarn` (agentLoop$'s `onWarn`). */
  readonly own?: Listener | undefined;
  /** Takes it when neither the warning's own listener nor `observability.onWarn` is set (configureAgentLoopDefaults). */
  readonly otherwise?: Listener | undefined;
  /** When no listener takes it, the process warning channel does (`process.emitWarning`, `console.warn` in browsers). */
  readonly orProcess?: boolean;
}

/** The app's warning sink: the bus's "warn" event, then the one listener the route and the app name. */
export type WarningSink = (warning: Warning, route?: WarningRoute) => void;

/** The sink over `bus` for an app whose `observability.onWarn` is `onWarn`. */
export function warningSink(bus: RuntimeBus, onWarn: Listener | undefined): WarningSink {
  return (warning, route = {}) => {
    bus.emit("warn", warning);
    const listener = route.own ?? onWarn ?? route.otherwise;
    if (listener) {
      try {
        listener(warning);
        return;
      } catch (error) {
        // Said once per message: a sink that throws on every warning would otherwise flood the channel.
        const message = `onWarn threw while reporting ${warning.code}: ${error instanceof Error ? error.message : String(error)}`;
        processWarning(message, WARNING_CODES.onWarnThrew, { once: true });
      }
    }
    if (route.orProcess) processWarning(warning.message, warning.code);
  };
}

/**
 * The app's bus and its warning sink. A throwing `app.on` listener is a warning (LOOM_LISTENER_FAILED),
 * except a throwing "warn" listener, which the process warning channel hears once (a warning about the
 * warning path cannot go through it).
 */
export function appBus(onWarn: Listener | undefined): { bus: RuntimeBus; warn: WarningSink } {
  const bus = createBus((error, event) => {
    const message = `an app.on("${event}") listener threw: ${error instanceof Error ? error.message : String(error)}`;
    if (event === "warn") processWarning(message, undefined, { once: true });
    else warn({ code: WARNING_CODES.listenerFailed, message, event });
  });
  const warn = warningSink(bus, onWarn);
  return { bus, warn };
}
