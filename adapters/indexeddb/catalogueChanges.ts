// Dexie-free half of the live catalogue: the announcement a committed write makes, and the registry of
// stores opened by `indexedDbStores`. The journal imports only this file, so an app that never imports
// the live view (catalogue.ts) never loads Dexie: the bundle tree-shakes it away (ADR 0007).
//
// The announcement is Dexie's own cross-tab message: Dexie (4.x, pinned) listens on the BroadcastChannel
// "x-storagemutated-1" and, for each message, re-runs the live queries it concerns in that context
// only. A BroadcastChannel delivers to every other channel object of that name in the origin (this
// tab's Dexie included, and Dexie in a worker or another tab), so one post reaches every live view, whether
// or not Dexie is loaded where the write happened. The parts are the plain (structured-clone) form of
// Dexie's RangeSet, which is what Dexie itself receives over that channel.
import type { Stores } from "../../stores/types.js";
import type { IndexedDbDeps } from "./connection.js";
import { EXECUTIONS_STORE } from "./schema.js";

/** Dexie's cross-context channel for `storagemutated` (dexie/src/globals/global-events.ts). */
export const DEXIE_STORAGE_MUTATED_CHANNEL = "x-storagemutated-1";

/** The index names of the catalogue table a live query may observe ("" is the primary key). */
const CATALOGUE_PARTS = ["", ":dels", "subject", "status", "startedAt"] as const;

interface ChannelLike {
  postMessage(message: unknown): void;
  unref?: () => void;
}

let channel: ChannelLike | null | undefined;

function changesChannel(): ChannelLike | null {
  if (channel !== undefined) return channel;
  const Channel = (globalThis as { BroadcastChannel?: new (name: string) => ChannelLike }).BroadcastChannel;
  channel = Channel ? new Channel(DEXIE_STORAGE_MUTATED_CHANNEL) : null;
  // Node: a channel left open would keep the process alive.
  channel?.unref?.();
  return channel;
}

/** The observability set "every key of the catalogue table of `name`", as Dexie receives it over its channel. */
export function catalogueChangeParts(name: string): Record<string, { d: 1; from: number; to: unknown[] }> {
  const table = `idb://${name}/${EXECUTIONS_STORE}/`;
  const parts: Record<string, { d: 1; from: number; to: unknown[] }> = {};
  // From -Infinity up to a key above every array key we store: Dexie's encoding of "every key".
  for (const part of CATALOGUE_PARTS) parts[table + part] = { d: 1, from: -Infinity, to: [[[]]] };
  return parts;
}

/** Tells Dexie live queries (in this tab and in others) that the catalogue of `name` changed. */
export function announceCatalogueChange(name: string): void {
  changesChannel()?.postMessage(catalogueChangeParts(name));
}

/** What the live view needs of stores opened by `indexedDbStores`: where they are, and their fate. */
export interface OpenedStores {
  name: string;
  deps: IndexedDbDeps;
  /** Set by `close()`: a view opened afterwards is closed at once, as the view opened with the stores was. */
  closed: boolean;
  /** Run by `close()`: the live view registers the closing of its Dexie connection here. */
  readonly onClose: Set<() => void>;
}

// Keyed by the Stores object and by its event store.
const opened = new WeakMap<object, OpenedStores>();

export function registerOpenedStores(stores: Stores, entry: OpenedStores): void {
  opened.set(stores, entry);
  opened.set(stores.events, entry);
}

export function openedStoresOf(stores: Stores): OpenedStores | undefined {
  return opened.get(stores) ?? opened.get(stores.events);
}
