// loomwork: the browser-safe public entry point (everything but the filesystem adapter).

export { createApp, App } from "./actors/app.js";
export type { StartOptions, ExecutionStats } from "./actors/app.js";
export { defineConfig } from "./actors/config.js";
export type { LoomConfig, ExecutionOptions, SecurityOptions, ComplianceOptions, ObservabilityOptions, RedactOption } from "./actors/config.js";
export { JournaledActor } from "./actors/actor.js";
export type { ReplayReport } from "./actors/execution.js";
export { realClock, simulatedClock } from "./actors/clock.js";
export type { Clock, SimulatedClock } from "./actors/clock.js";
export { createToolEffect, createTaskEffect } from "./actors/effects.js";
export type { Effect, EffectContext, EffectKind, EffectMiddleware } from "./actors/effects.js";
export { createLlmEffect } from "./actors/model.js";
export type { Model, Message, ModelReply, ModelRequest, ToolCall, Usage } from "./actors/model.js";
export { EffectStoppedError } from "./actors/effectRuntime.js";
export type { RuntimeEvents, Warning } from "./actors/bus.js";
export {
  NonDeterminismError,
  ConfigError,
  UnknownEffectError,
  DuplicateExecutionError,
  UnknownExecutionError,
  ExecutionFailedError,
  ExecutionStoppedError,
  NonJsonOutputError,
  AppClosedError,
} from "./actors/errors.js";
export type { SerializedError } from "./actors/errors.js";
export { stepInput, effectActor } from "./machines/effect.js";

export { memoryStores, MemoryEventStore, MemoryContentStore, MemoryKeyStore } from "./stores/memory.js";
export {
  LoomworkError,
  ConcurrencyError,
  JournalCorruptionError,
  StorageQuotaError,
  WriterLockedError,
  WriterFailedError,
  SubjectErasedError,
} from "./stores/errors.js";
export {
  EVENT_SCHEMA,
  EXECUTION_STARTED,
  EVENT_RECEIVED,
  STEP_COMPLETED,
  STEP_FAILED,
  TIMER_SET,
  TRANSITION,
  EXECUTION_ENDED,
  ERASURE_CONTENT_DELETE_INTENDED,
  ERASURE_CONTENT_DELETED,
} from "./stores/schema.js";
export { EVENT_STORE_SPI_VERSION, CONTENT_STORE_SPI_VERSION, KEY_STORE_SPI_VERSION } from "./stores/types.js";
export type {
  Stores,
  EventStore,
  ContentStore,
  KeyStore,
  JournalRecord,
  ExecutionInfo,
  ExecutionStatus,
  StoredSnapshot,
  ArchiveSegment,
  ContentAddress,
  ContentInfo,
  ContentPutOptions,
} from "./stores/types.js";
