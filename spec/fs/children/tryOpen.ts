// Tries to open the stores on argv[2]; prints the outcome as JSON: { ok } or { code, resource, ms }.
import { fsStores } from "../../../adapters/fs/index.js";

const dir = process.argv[2]!;
const t0 = performance.now();
try {
  const stores = await fsStores({ dir });
  await stores.close();
  process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
} catch (error) {
  const { code, resource } = error as { code?: string; resource?: string };
  process.stdout.write(`${JSON.stringify({ code, resource, ms: performance.now() - t0 })}\n`);
}
