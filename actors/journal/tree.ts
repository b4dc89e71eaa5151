// The runtime side of child executions (ADR 0012 D3, D6): what an app does at each crossing of a tree. A child step
// starts or resumes the child execution (idempotent by its derived id) and resolves with its output; a message is
// journaled in its receiver's log; a stop reaches a child wherever it stands. Every crossing is repaired by a
// recovery: the parent's re-runs its child steps (a child that ended answers from its log), re-sends its outbox and
// repeats its last stops; a child whose parent ended stops itself when it is resumed.
import type { AnyStateMachine, EventObject } from "xstate";
import type { EventStore, FleetPort } from "../../stores/types.js";
import { ChildLimitError, ConfigError, DuplicateExecutionError } from "../errors.js";
import type { StartOptions } from "../logics.js";
import {
  childSpecOf,
  isMachineLogic,
  referencedLogic,
  type ChildSpec,
  type ParentLink,
  type TreeAddress,
  type TreeMessage,
} from "./children.js";
import type { Execution } from "./execution.js";
import type { StepCall } from "./host.js";
import { outcomeFrom } from "./outcomes.js";
import { endOnFleet } from "../fleet/submit.js";

/** What the tree needs of its app. */
export interface TreePort {
  readonly events: EventStore;
  /** The live execution of `executionId` in this app, if any. */
  running(executionId: string): Execution | undefined;
  /** The app's newest held definition of a logic id. */
  logicOf(logicId: string): AnyStateMachine | undefined;
  start(logic: AnyStateMachine, options: StartOptions, links: { parent: ParentLink; root: string }): Promise<unknown>;
  submit(logic: AnyStateMachine, options: StartOptions, links: { parent: ParentLink; root: string }): Promise<void>;
  /** The fleet's port when this app is a fleet worker's (children are the fleet's: ADR 0012 D9); else undefined. */
  fleet(): FleetPort | undefined;
  /** An execution's state rebuilt from the journal without running anything. */
  recoverQuietly(executionId: string): Promise<Execution>;
  resume(executionId: string, logic?: AnyStateMachine): Promise<unknown>;
  result(executionId: string): Promise<unknown>;
  stop(executionId: string, reason: string): Promise<void>;
  closed(): boolean;
  /** `execution.children.maxDepth`. */
  readonly maxDepth: number;
}

export class ExecutionTree {
  // Child executions being started or resumed by a step of their parent: a message or a stop for one waits for it.
  private readonly openings = new Map<string, Promise<Execution | undefined>>();

  constructor(private readonly app: TreePort) {}

  /** A child step: starts (or resumes, or reads the end of) the child execution, and resolves with its output. */
  runChild(call: StepCall): Promise<unknown> {
    const spec = childSpecOf(call.pending);
    if (!spec) return Promise.reject(new TypeError(`step ${call.pending.stepId} is not a child execution's`));
    const id = spec.executionId;
    const opening = this.open(call, spec);
    this.openings.set(id, opening);
    const forget = () => {
      if (this.openings.get(id) === opening) this.openings.delete(id);
    };
    opening.then(forget, forget);
    const fleet = this.app.fleet();
    if (fleet) return opening.then(() => this.fleetChild(fleet, id, call));
    return opening.then(async (child) => {
      try {
        return await this.app.result(id);
      } finally {
        // What the child sent before it ended reaches the parent before its outcome does, as on XState.
        await child?.whenDelivered();
        // A child not held here (on the fleet, or one that ended in its first macrostep): read from its log.
        if (!child) await this.pullMessages(id, call.executionId);
      }
    });
  }

  // On the fleet a child is the fleet's wherever it runs (this worker may hold it, then park it or lose its lease, and
  // this app's outcome of it then rejects with no end journaled): its outcome is the end its log records. What it
  // sent this parent and may not have delivered is read from that log and journaled here first.
  private async fleetChild(fleet: FleetPort, childId: string, call: StepCall): Promise<unknown> {
    const read = async (id: string) => {
      const child = await this.app.recoverQuietly(id);
      return child.ended ? child : undefined;
    };
    const child = await endOnFleet(fleet, this.app.events, childId, read, call.signal);
    const parent = this.app.running(call.executionId);
    for (const message of child.state.outbox ?? [])
      if (parent && message.to === call.executionId)
        await parent.receive(message.event, { executionId: childId, messageId: message.messageId });
    return outcomeFrom(childId, child.state);
  }

  // A child this app does not hold (it ran on the fleet, or ended before the app looked): what it sent this parent
  // and may not have delivered yet (its last macrostep's, which the end leaves unacknowledged) is read from its log
  // and journaled here first; a message already journaled is dropped as a duplicate.
  private async pullMessages(childId: string, parentId: string): Promise<void> {
    const parent = this.app.running(parentId);
    if (!parent) return;
    const child = await this.app.recoverQuietly(childId).catch(() => undefined);
    for (const message of child?.state.outbox ?? [])
      if (message.to === parentId)
        await parent.receive(message.event, { executionId: childId, messageId: message.messageId });
  }

  /** Journals `message` in its receiver's log (dropped when the receiver ended or is unknown). */
  async deliver(message: TreeMessage, from: string): Promise<void> {
    // To a live source found through the tree's registry: live, as the parent's own sendTo to it.
    if (message.source !== undefined)
      return this.sendLive({ executionId: message.to, source: message.source }, message.event);
    const fleet = this.app.fleet();
    if (fleet?.message) {
      // On the fleet: through the receiver's inbox, for whichever worker holds it (here too).
      if (!(await this.runsSomewhere(message.to))) return;
      return fleet.message(message.to, {
        event: message.event,
        from: { executionId: from, messageId: message.messageId },
      });
    }
    const receiver = await this.live(message.to);
    await receiver?.receive(message.event, { executionId: from, messageId: message.messageId });
  }

  /**
   * What a live custom action sends through a tree ref (`system.get(id).send(event)`), or a message to a live source:
   * to a live source, delivered to it live; to an execution, journaled there as an external event (no sender id: the
   * action ran once, after its macrostep was durable, and a replay never runs it). Dropped when the receiver ended.
   */
  async sendLive(address: TreeAddress, event: EventObject): Promise<void> {
    const fleet = this.app.fleet();
    if (fleet?.message && !this.app.running(address.executionId)) {
      if (!(await this.runsSomewhere(address.executionId))) return;
      return fleet.message(
        address.executionId,
        address.source === undefined ? { event, live: true } : { event, source: address.source },
      );
    }
    const receiver = await this.live(address.executionId);
    if (!receiver) return;
    if (address.source === undefined) await receiver.send(event);
    else receiver.toSource(address.source, event);
  }

  /** Stops a child execution, journaled in its log; a no-op once it ended or when nothing is known of it. */
  async stopChild(executionId: string, reason: string): Promise<void> {
    const fleet = this.app.fleet();
    if (fleet?.message && !this.app.running(executionId)) {
      if (await this.runsSomewhere(executionId)) await fleet.message(executionId, { stop: reason });
      return;
    }
    const child = await this.live(executionId);
    if (child) await this.app.stop(executionId, reason);
  }

  /** Resolves once the child execution is settled: true while it still runs here, false once it ended (or is not here). */
  async settled(executionId: string): Promise<boolean> {
    await this.openings.get(executionId)?.catch(() => undefined);
    const child = this.app.running(executionId);
    // On the fleet a child elsewhere (or one this worker let go: parked, or its lease lost) is another worker's:
    // settled while the journal says it runs; once it ended, its parent's step is about to journal its outcome.
    if (this.app.fleet() && (!child || child.failure)) return this.runsSomewhere(executionId);
    if (!child || child.ended) return false;
    await child.whenSettled();
    return !child.ended && !child.failure;
  }

  /** After a resume: a child whose parent ended is not wanted any more (its parent's end came before its stop). */
  async stopOrphan(execution: Execution): Promise<void> {
    const parent = execution.state.parent;
    if (!parent || execution.ended) return;
    const info = await this.app.events.getExecution(parent.executionId);
    if (info && info.status !== "running") await this.app.stop(execution.executionId, "its parent ended");
  }

  // True when the journal says `executionId` runs (here or elsewhere), once a start of it under way here is done.
  private async runsSomewhere(executionId: string): Promise<boolean> {
    await this.openings.get(executionId)?.catch(() => undefined);
    return (await this.app.events.getExecution(executionId))?.status === "running";
  }

  // The running execution of `executionId`, resumed here when the journal says it runs; undefined once it ended.
  private async live(executionId: string): Promise<Execution | undefined> {
    await this.openings.get(executionId)?.catch(() => undefined);
    const here = this.app.running(executionId);
    if (here) return here.ended ? undefined : here;
    if (this.app.closed() || !(await this.runsSomewhere(executionId))) return undefined;
    await this.app.resume(executionId);
    const resumed = this.app.running(executionId);
    return resumed && !resumed.ended ? resumed : undefined;
  }

  private async open(call: StepCall, spec: ChildSpec): Promise<Execution | undefined> {
    const id = spec.executionId;
    const logic = this.childLogic(call, spec);
    const onFleet = this.app.fleet() !== undefined;
    if ((await this.app.events.head(id)) > 0) {
      // On the fleet it is the fleet's (a worker claims it): never resumed here by its parent.
      if (onFleet) return undefined;
      await this.app.resume(id, logic);
      return this.app.running(id);
    }
    const parent = this.app.running(call.executionId);
    const links = {
      parent: {
        executionId: call.executionId,
        childId: call.pending.childId,
        stepId: call.pending.stepId,
        ...(spec.syncSnapshot ? { syncSnapshot: true } : {}),
        ...(spec.system ? { system: spec.system } : {}),
      },
      root: parent?.root ?? call.executionId,
    };
    // Levels below the root, read off the derived id (`<root>/<child>/<grandchild>`): past the limit, not started.
    const depth = id.slice(links.root.length + 1).split("/").length;
    if (depth > this.app.maxDepth) throw new ChildLimitError(id, "maxDepth", depth, this.app.maxDepth);
    const options: StartOptions = {
      executionId: id,
      input: spec.input,
      ...(call.subject === undefined ? {} : { subject: call.subject }),
    };
    if (onFleet) {
      // A child on the fleet is submitted: any worker claims it, as any execution (ADR 0012 D9).
      await this.app.submit(logic, options, links);
      return undefined;
    }
    try {
      await this.app.start(logic, options, links);
    } catch (error) {
      // Started meanwhile (a resume of the whole store found its log): it is the same child.
      if (!(error instanceof DuplicateExecutionError)) throw error;
      await this.app.resume(id, logic);
    }
    return this.app.running(id);
  }

  // The child's machine: as the parent's machine names it, else the app's logic of that id.
  private childLogic(call: StepCall, spec: ChildSpec): AnyStateMachine {
    const named = spec.src === undefined ? call.pending.logic : referencedLogic(call.logic, spec.src);
    const logic = isMachineLogic(named) ? named : this.app.logicOf(spec.logicId);
    if (!logic)
      throw new ConfigError(
        "logics",
        `child execution "${spec.executionId}" runs logic "${spec.logicId}", which this app does not know: list it in defineConfig({ logics: [...] }).`,
      );
    return logic;
  }
}
