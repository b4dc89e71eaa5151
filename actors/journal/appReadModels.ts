// loomwork/read-models: the read models of an app, created by the caller that renders them rather than by
// the app, so an app that never lists its executions does not bundle @xstate/store (docs/adr/0011).
import { appInternals, type App } from "../app.js";
import { readModelsOver, type ReadModels } from "./readModels.js";

/**
 * Read models on @xstate/store over `app`: the execution list with status, step and usage counters, kept
 * live from the app's appends. Their hydration warnings go to the app's `warn` event and `onWarn`; an
 * erased subject's executions leave them as they leave the app. Call `dispose()` when done.
 *
 * @example
 * const models = createReadModels(app);
 * await models.ready;
 * models.executions.subscribe(({ context }) => render(Object.values(context.executions)));
 */
export function createReadModels(app: App): ReadModels {
  const port = appInternals(app);
  return readModelsOver({
    config: app.config,
    stores: app.stores,
    on: (event, listener) => app.on(event, listener),
    log: (executionId) => app.log(executionId),
    warn: (warning) => port.warn(warning),
    onForget: (listener) => port.onForget(listener),
  });
}
