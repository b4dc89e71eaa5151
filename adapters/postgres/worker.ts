// createWorker: one process of the fleet. It claims submitted executions (up to `concurrency`), resumes
// each from the journal in its own app, heartbeats the leases, appends only under them (the fence in the
// append statement), starts an effect only while its lease surely holds (its own clock), delivers inbox
// events, and on stop (or SIGTERM) drains and gives the rest back.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { AnyStateMachine } from "xstate";
import { appInternals, createApp, type App } from "../../actors/app.js";
import { defineConfig, type LoomConfig } from "../../actors/config.js";
import type { Effect } from "../../actors/effects/effect.js";
import type { JournaledActor } from "../../actors/journal/actor.js";
import { ConfigError } from "../../actors/errors.js";
import { TOOL_APPROVAL_EVENT } from "../../actors/agents/approvals.js";
import { checkWorkerOptions } from "./options.js";
import { FLEET_MESSAGE_KEY, NOTIFY, WORKER_DEFAULTS } from "./constants.js";
import type { FleetMessage } from "../../stores/types.js";
import { EXECUTION_ENDED } from "../../stores/schema.js";
import type { Notification } from "./database.js";
import type { AppendHooks, LeaseFence } from "./eventStore.js";
import type { PostgresStores } from "./types.js";
import { LeaseLostError } from "./errors.js";
import { LeaseTable, type Lease } from "./leases.js";
import { WorkerSession } from "./sessions.js";
import { ScheduleRunner } from "../../actors/schedules/runner.js";

// How soon a worker tries again to give back the leases it gave up when its session dropped.
const GIVE_BACK_RETRY_MS = 250;

/** Options of `createWorker`. */
export interface WorkerOptions {
  /** The stores of the fleet (`postgresStores`); the worker neither opens nor closes them. */
  stores: PostgresStores;
  /** The machines the worker can run (an execution is resumed on its journaled logic id). */
  logics: AnyStateMachine[];
  /** The effects the machines' steps run, by the id a step invokes, as in `defineConfig({ effects })`. */
  effects: Record<string, Effect>;
  /**
   * Executions this worker runs at once.
   * @defaultValue 8
   */
  concurrency?: number;
  /**
   * How long a lease lasts without a heartbeat (heartbeats every third of it). A dead worker's executions
   * are taken over this long after its last heartbeat. The worker also starts no effect once this long
   * has passed, on its own monotonic clock, since it sent the claim or heartbeat that last renewed the lease.
   * @defaultValue 15000
   */
  leaseMs?: number;
  /**
   * How often the worker looks for work when no notification came (a floor under LISTEN/NOTIFY).
   * @defaultValue 1000
   */
  pollMs?: number;
  /**
   * How long `stop()` waits for running executions to end before it halts them and gives their leases back.
   * @defaultValue 30000
   */
  drainMs?: number;
  /**
   * How often the worker looks for workers whose database session ended (their process died) and gives their leases
   * back at once, so their executions are taken over within about this long instead of after `leaseMs`. The worker
   * registers its own session for its lifetime (one connection of its own, holding an advisory lock). A worker frozen
   * with its session open keeps its leases until they expire. `false`: neither registers nor looks (lease expiry only).
   * @defaultValue 500
   */
  sessionCheckMs?: number | false;
  /** This worker's id in the lease table. @defaultValue `<hostname>:<pid>:<random>` */
  id?: string;
  /**
   * Signals that drain the worker and then end the process (exit code 0). `[]` installs no handler.
   * @defaultValue ["SIGTERM"]
   */
  signals?: NodeJS.Signals[];
  /**
   * Called when this worker gave an execution up because its lease was lost (expired, taken over): an
   * append was refused, or a step was not started because the lease may have run out before it.
   */
  onLeaseLost?: (executionId: string) => void;
  /** Further app options (clock, execution, security, capabilities, observability) for the worker's app. */
  app?: Omit<LoomConfig, "stores" | "effects" | "logics">;
}

/** A running worker; see `createWorker`. */
export interface Worker {
  readonly id: string;
  /** The app the worker runs executions in. */
  readonly app: App;
  /** Ids of the executions this worker holds a lease on. */
  holding(): string[];
  /** Stops claiming, waits up to `drainMs` for running executions, then halts the rest and releases their leases. */
  stop(): Promise<void>;
}

/** One inbox message being journaled: what the append of its event consumes. */
interface Delivery {
  executionId: string;
  inboxId: string;
  consumed: boolean;
}

interface Held extends Lease {
  /**
   * The worker's monotonic time (`performance.now()`) before which the lease surely holds: when the claim or
   * the last heartbeat that renewed it was sent, plus `leaseMs`. The database set `lease_until` later than
   * that send, by its own clock, so no other worker can have claimed the execution before this time.
   */
  heldUntil: number;
  actor?: JournaledActor;
  delivering?: Promise<void>;
  /** Set when a delivery was asked for while one ran: it reads the inbox once more before it ends. */
  lookAgain?: boolean;
  lost?: boolean;
  /** This worker appended its end under the lease: that append gave the lease back. */
  ended?: boolean;
  /** A look under way at whether the execution waits only on its tree (then it is parked: ADR 0012 D9). */
  parking?: Promise<void>;
  /** Set when it appended while a look ran: the look waits for it to settle again before it decides. */
  parkAgain?: boolean;
  /** Parked: let go here, its lease given back with the children it waits on. */
  parked?: boolean;
}

/**
 * Starts a worker of the fleet: any number of processes on any number of machines may run one over the
 * same database. Executions come from `app.submit` (in any process); each is run by exactly one worker
 * at a time, taken over after its lease expires when that worker dies, and resumed from the journal
 * (nothing recorded runs again).
 *
 * @example
 * const stores = await postgresStores({ url: process.env.DATABASE_URL });
 * const worker = await createWorker({ stores, logics: [agent], effects, concurrency: 8 });
 * // ... on shutdown (SIGTERM does this by default):
 * await worker.stop();
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  // Checked whole before anything is claimed or listened to: a bad option is refused at once, nothing written.
  const { stores, concurrency, leaseMs, pollMs, drainMs, sessionCheckMs, signals, onLeaseLost, ...checked } =
    checkWorkerOptions(options, WORKER_DEFAULTS);
  const id = checked.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const table = new LeaseTable(stores.db, id, leaseMs);
  const held = new Map<string, Held>();
  // The fence of an execution this worker never claimed is one no lease has (epoch 0): refused, never unfenced.
  const fences = new Map<string, LeaseFence>();
  // The message being delivered rides in the async context of its own send: the execution's mailbox runs the
  // send's append as a continuation of that call, so only that append sees it. A timer's or another send's
  // append (another context) consumes nothing, and a message leaves the inbox only with its event journaled.
  const delivering = new AsyncLocalStorage<Delivery>();
  const hooks: AppendHooks = {
    // A child's start, submitted by this worker's app (ADR 0012 D9), is its first append: the seq fence guards it
    // (nobody else can journal seq 1 of an id with no log), and the fleet then claims it like any submitted start.
    fence: (executionId, expectedSeq) =>
      fences.get(executionId) ?? (expectedSeq === 0 ? undefined : { owner: id, epoch: "0" }),
    inboxMessage: (executionId) => {
      const delivery = delivering.getStore();
      return delivery?.executionId === executionId && !delivery.consumed ? delivery.inboxId : undefined;
    },
    consumed: (executionId, inboxId) => {
      const delivery = delivering.getStore();
      if (delivery?.executionId === executionId && delivery.inboxId === inboxId) delivery.consumed = true;
    },
  };
  // An append is fenced in its statement, but an effect has no statement: a worker paused between an append
  // and the step it schedules (a GC pause, SIGSTOP, a VM swapped out) would start that step after another
  // worker took the execution over. So each effect (each attempt) checks the lease on this worker's own
  // monotonic clock first; when the lease may have run out, the step does not start, the execution's fence
  // is set to one no lease has (so its outcome, and anything else of it, is never journaled here), and the
  // worker gives the execution up to whoever claims it next.
  const leaseHeld = (executionId: string): boolean => {
    const entry = held.get(executionId);
    return entry !== undefined && !entry.lost && performance.now() < entry.heldUntil;
  };
  const giveUp = (executionId: string): void => {
    fences.set(executionId, { owner: id, epoch: "0" });
    const entry = held.get(executionId);
    // Kept in `held` (not claimed again here) until its run has ended; no longer heartbeated.
    if (entry) entry.lost = true;
  };
  const effects = Object.fromEntries(
    Object.entries(checked.effects).map(([effectId, effect]): [string, Effect] => [
      effectId,
      {
        ...effect,
        run: (input: unknown, ctx) => {
          if (leaseHeld(ctx.executionId)) return effect.run(input, ctx);
          giveUp(ctx.executionId);
          return Promise.reject(new LeaseLostError(ctx.executionId, id, ctx.stepId));
        },
      },
    ]),
  );
  const app = createApp(
    defineConfig({
      ...options.app,
      stores: { ...stores, events: stores.events.withHooks(hooks) },
      effects,
      logics: checked.logics,
    }),
  );
  // This app's children are the fleet's (submitted, claimed by any worker); its tree's messages come through the inbox.
  const internals = appInternals(app);
  internals.fleetWorker();
  // Every worker fires the stored schedules: each tick's execution is submitted once (docs/scaling.md, "Schedules").
  const schedules = new ScheduleRunner(app, stores.schedules, { submit: true, pollMs });
  // A tree's message (ADR 0012 D9): journaled with its sender and id (a duplicate dropped unwritten), or a stop.
  const treeMessage = async (executionId: string, message: FleetMessage): Promise<void> => {
    if ("stop" in message) return app.stop(executionId, message.stop);
    const execution = internals.execution(executionId);
    // Parked (let go) while the inbox was read: the message stays in the inbox, and wakes the execution.
    if (!execution) throw new Error(`execution "${executionId}" is not held here any more`);
    if ("source" in message) execution.toSource(message.source, message.event);
    // A decision a lead's worker passed on to the sub-agent that waits (issue 34): checked in its turn, as every decision.
    else if ("live" in message && message.event.type === TOOL_APPROVAL_EVENT)
      await execution.ref.sendAsync(message.event);
    else if ("live" in message) await execution.send(message.event);
    else await execution.receive(message.event, message.from);
  };
  const runs = new Set<Promise<void>>();
  let stopping = false;
  let ticking: Promise<void> | undefined;
  let again = false;
  let scanWanted = false;

  // Journals the execution's inbox messages, oldest first, until none is left. One pass per execution at a
  // time; a call while one runs asks it to look once more (a message may have come after its last look).
  const drainInbox = async (entry: Held): Promise<void> => {
    try {
      while (!stopping && !entry.lost && !entry.parked && entry.actor && held.get(entry.executionId) === entry) {
        entry.lookAgain = false;
        const messages = await table.inbox(entry.executionId);
        if (messages.length === 0 && !entry.lookAgain) return;
        for (const message of messages) {
          if (stopping || entry.lost || entry.parked) return;
          const info = await stores.events.getExecution(entry.executionId);
          if (info?.status !== "running") {
            await table.dropInbox(message.id);
            continue;
          }
          // The append that journals the event deletes the message in the same statement (exactly once).
          const delivery: Delivery = { executionId: entry.executionId, inboxId: message.id, consumed: false };
          const actor = entry.actor;
          const parsed = JSON.parse(message.event) as { type: string; [FLEET_MESSAGE_KEY]?: FleetMessage };
          const tree = parsed.type === FLEET_MESSAGE_KEY ? parsed[FLEET_MESSAGE_KEY] : undefined;
          const refused = await delivering
            .run(delivery, () => (tree ? treeMessage(entry.executionId, tree) : actor.sendAsync(parsed)))
            .then(
              () => false,
              (error: unknown) => (error instanceof ConfigError ? true : undefined),
            );
          // Failed to journal (lease lost, database away): the message stays for the lease holder.
          if (refused === undefined) return;
          // Not journaled: the event was refused, or the execution ended meanwhile. Nothing will consume it.
          if (!delivery.consumed) await table.dropInbox(message.id).catch(() => undefined);
        }
      }
    } catch {
      // The database is away: the next tick delivers again.
    }
  };

  const deliver = (entry: Held): Promise<void> => {
    if (entry.delivering) {
      entry.lookAgain = true;
      return entry.delivering;
    }
    // `delivering` is cleared in a callback, which always runs after this assignment: a pass that ends
    // without waiting (no actor yet: its resume is still running) leaves nothing behind that would turn
    // every later call into a no-op while the lease is still renewed.
    const pass = drainInbox(entry).finally(() => {
      if (entry.delivering === pass) entry.delivering = undefined;
    });
    entry.delivering = pass;
    return pass;
  };

  // ADR 0012 D9: an execution of a tree that waits only on its children and messages (nothing else of it under way,
  // its inbox drained) holds no slot. It is let go here without journaling anything, its fence set to one no lease
  // has (nothing more of it is written from here), and its lease given back with the children it waits on: the claim
  // takes it again once one of them ended or a message is in its inbox. Looked at after each append, and once resumed.
  const considerParking = (entry: Held): void => {
    if (entry.parking) {
      entry.parkAgain = true;
      return;
    }
    const look = (async () => {
      const execution = internals.execution(entry.executionId);
      if (!execution) return;
      do {
        entry.parkAgain = false;
        await execution.whenSettled();
        await execution.whenDelivered();
      } while (entry.parkAgain);
      // From the look to the let-go, no await: nothing of the execution can start in between.
      if (stopping || entry.lost || entry.parked || entry.delivering || held.get(entry.executionId) !== entry) return;
      if (internals.execution(entry.executionId) !== execution) return;
      const waitingOn = execution.waitingOnlyOnTree();
      if (!waitingOn) return;
      entry.parked = true;
      fences.set(entry.executionId, { owner: id, epoch: "0" });
      internals.letGo(
        entry.executionId,
        new Error(`execution "${entry.executionId}" parked: it waits only on its children and messages`),
      );
      await table.park(entry, waitingOn).catch(() => undefined); // else its lease runs out, as after a crash
      schedule();
    })()
      .catch(() => undefined)
      .finally(() => {
        if (entry.parking === look) entry.parking = undefined;
      });
    entry.parking = look;
  };
  app.on("append", ({ executionId, records }) => {
    const entry = held.get(executionId);
    if (entry && records.some((r) => r.type === EXECUTION_ENDED)) entry.ended = true;
    if (entry?.actor) considerParking(entry);
  });

  const runOne = async (entry: Held): Promise<void> => {
    let release = false;
    try {
      // The first claim of a submitted execution runs its first macrostep's actions (the submitter ran none); a parked
      // execution claimed again has a later epoch.
      entry.actor = await internals.resumeClaimed(entry.executionId, entry.epoch === "1");
      void deliver(entry).finally(() => considerParking(entry));
      await app.result(entry.executionId).catch((error: unknown) => {
        if (error instanceof LeaseLostError || (error instanceof Error && error.cause instanceof LeaseLostError))
          onLeaseLost?.(entry.executionId);
      });
      // Its end, appended here, gave the lease back; ended otherwise (stopped elsewhere), it is given back here.
      if (!entry.ended) {
        const info = await stores.events.getExecution(entry.executionId);
        release = !entry.parked && info?.status !== "running";
      }
    } catch {
      // Resume failed (the database is away, the logic unknown): the lease expires and the fleet retries.
    } finally {
      if (held.get(entry.executionId) === entry) held.delete(entry.executionId);
      if (release) await table.release([entry]).catch(() => undefined);
      schedule();
    }
  };

  // `scan`: also look for inbox rows of the executions held here, whose notification may have been lost (the poll, a
  // reconnect); a tick a notification woke only claims.
  const tick = async (scan: boolean): Promise<void> => {
    if (stopping) return;
    const free = concurrency - held.size;
    if (free > 0) {
      const sentAt = performance.now();
      const { leases: claimed, queued } = await table.claim(free, [...held.keys()]);
      // Queued executions are admitted after those that hold a slot already (resumed after a crash, woken parents).
      if (queued) claimed.push(...(await table.admit(free - claimed.length)));
      for (const lease of claimed) {
        const entry: Held = { ...lease, heldUntil: sentAt + leaseMs };
        held.set(lease.executionId, entry);
        fences.set(lease.executionId, { owner: id, epoch: lease.epoch });
        const run = runOne(entry);
        runs.add(run);
        void run.finally(() => runs.delete(run));
      }
    }
    if (!scan) return;
    for (const executionId of await table.withInbox([...held.keys()])) {
      const entry = held.get(executionId);
      if (entry) void deliver(entry);
    }
  };

  function schedule(scan = false): void {
    if (stopping) return;
    scanWanted ||= scan;
    if (ticking) {
      again = true;
      return;
    }
    const scanning = scanWanted;
    scanWanted = false;
    ticking = tick(scanning)
      .catch(() => undefined)
      .finally(() => {
        ticking = undefined;
        if (again) {
          again = false;
          schedule();
        }
      });
  }

  const heartbeat = async () => {
    const leases = [...held.values()].filter((entry) => !entry.lost);
    const sentAt = performance.now();
    // The database away: nothing renewed; each lease runs out on this worker's clock as it does in the database.
    const lost = await table.heartbeat(leases).catch(() => undefined);
    if (!lost) return;
    const gone = new Set(lost);
    for (const entry of leases) {
      if (!gone.has(entry.executionId)) entry.heldUntil = Math.max(entry.heldUntil, sentAt + leaseMs);
      else {
        // Taken over while this worker was away: its appends are refused by the fence; stop counting them here.
        entry.lost = true;
        if (held.get(entry.executionId) === entry) held.delete(entry.executionId);
      }
    }
  };

  const onNotification = (n: Notification) => {
    if (n.kind === NOTIFY.runnable) schedule();
    else if (n.kind === "reconnected") schedule(true);
    else if (n.kind === NOTIFY.inbox) {
      const entry = held.get(n.executionId);
      // Not held here: it may be parked, and a message wakes it (the claim looks at its inbox).
      if (entry) void deliver(entry);
      else schedule();
    }
    // A child ended (its id is its parent's, then "/"): its parked parent may be claimable now. A root's end wakes no one.
    else if (n.kind === NOTIFY.ended && n.executionId.includes("/")) schedule();
  };
  // Failover at session end (sessions.ts): registered before the first claim, so no lease of this worker's is ever
  // unregistered. When the session drops under a live process, its leases may be given back by others at once: every
  // execution held is given up here (nothing more of it starts or is written), as when a lease is lost.
  // Once registered again (a server restart: every session ended), the leases given up are given back at once rather
  // than left to expire: nothing more of those executions is written from here (their fence is one no lease has).
  const abandoned: Lease[] = [];
  const session =
    sessionCheckMs === false
      ? undefined
      : new WorkerSession(
          stores.db,
          id,
          () => {
            for (const entry of held.values())
              if (!entry.lost) abandoned.push({ executionId: entry.executionId, epoch: entry.epoch });
            for (const executionId of [...held.keys()]) giveUp(executionId);
          },
          () => giveBack(),
        );
  // Tried again until the database takes it (the pool's first connections after a restart may still be dead ones).
  function giveBack(): void {
    const leases = abandoned.splice(0);
    if (leases.length === 0 || stopping) return;
    table.release(leases).then(
      () => schedule(),
      () => {
        abandoned.push(...leases);
        setTimeout(giveBack, GIVE_BACK_RETRY_MS).unref();
      },
    );
  }
  await session?.open();
  const reaping = session
    ? setInterval(() => void session.reap().catch(() => undefined), sessionCheckMs || 0)
    : undefined;
  const unsubscribe = await stores.db.subscribe(onNotification).catch(() => () => undefined);
  const poll = setInterval(() => schedule(true), pollMs);
  const beat = setInterval(() => void heartbeat(), leaseMs / 3);
  schedule(true);
  schedules.wake();

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      stopping = true;
      schedules.stop();
      clearInterval(poll);
      clearInterval(reaping);
      unsubscribe();
      await ticking;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...runs]),
        new Promise((resolve) => (timer = setTimeout(resolve, drainMs))),
      ]);
      clearTimeout(timer);
      clearInterval(beat);
      const rest = [...held.values()];
      await app.close();
      await table.release(rest).catch(() => undefined);
      await session?.close();
      for (const signal of signals) process.off(signal, onSignal);
    })());

  const onSignal = () => void stop().finally(() => process.exit(0));
  for (const signal of signals) process.once(signal, onSignal);

  return {
    id,
    app,
    holding: () => [...held.values()].filter((entry) => !entry.lost).map((entry) => entry.executionId),
    stop,
  };
}
