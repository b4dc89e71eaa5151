// The page `loomwork devtools` serves: the devtools page over the CLI's HTTP endpoints, with the ELK the server
// serves beside it (elkjs's browser bundle, a classic script that defines `ELK`). Loaded as it is, no bundler.
import type { LayoutEngine } from "./layout.js";
import { renderDevtools, type DevtoolsSource } from "./page.js";
import type { DevtoolsExecution, DevtoolsModel } from "./view.js";

interface Boot {
  /** The token the server requires on a decision, so that no other page can post one. */
  token: string;
  title: string;
  pollMs: number;
  executionId?: string;
}

async function json<T>(response: Response): Promise<T> {
  if (!response.ok) {
    const body = (await response.json().catch(() => undefined)) as { error?: string } | undefined;
    throw new Error(body?.error ?? `${response.status} ${response.statusText}`);
  }
  return (await response.json()) as T;
}

/** The CLI server's endpoints as a `DevtoolsSource`. */
export function httpSource(token: string): DevtoolsSource {
  return {
    tree: async () => json<DevtoolsExecution[]>(await fetch("api/executions", { cache: "no-store" })),
    model: async (id) =>
      json<DevtoolsModel>(await fetch(`api/model?id=${encodeURIComponent(id)}`, { cache: "no-store" })),
    decide: async (executionId, toolCallId, approved, reason) => {
      await json(
        await fetch("api/decide", {
          method: "POST",
          headers: { "content-type": "application/json", "x-loomwork-devtools": token },
          body: JSON.stringify({ executionId, toolCallId, approved, ...(reason === undefined ? {} : { reason }) }),
        }),
      );
    },
  };
}

const boot = JSON.parse(document.getElementById("loom-boot")!.textContent!) as Boot;
const Elk = (globalThis as unknown as { ELK: new () => LayoutEngine }).ELK;
const page = renderDevtools(document.getElementById("devtools")!, httpSource(boot.token), {
  elk: new Elk(),
  pollMs: boot.pollMs,
  syncHash: true,
  title: boot.title,
  ...(boot.executionId ? { executionId: boot.executionId } : {}),
});
(globalThis as unknown as { loomDevtools: unknown }).loomDevtools = page;
