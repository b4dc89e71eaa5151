// loomwork: the browser-safe public entry point: what an app author uses to define, start, resume, stream and
// watch executions. The rarer roles have their own entries: loomwork/lifecycle, loomwork/upgrades,
// loomwork/read-models (docs/adr/0011-entry-points-by-role.md); the stores' adapters theirs.

export { createApp, App } from "./actors/app.js";
export type { StartOptions, SubmitOptions, ExecutionStats } from "./actors/app.js";
// Queues of the fleet (docs/scaling.md, "Queues, limits and priorities").
export { QUEUE_PRIORITY } from "./actors/fleet/queues.js";
export type { QueueOptions } from "./actors/fleet/queues.js";
// Versions and upgrades (docs/upgrades.md).
export { patched, patchedValue, deprecatePatch } from "./machines/helpers/patches.js";
export type { PatchGuard, PatchedValue } from "./machines/helpers/patches.js";
export { declaredVersionOf, machineHashOf } from "./actors/journal/versions.js";
export { defineConfig, DEFAULT_SETTLED_CACHE } from "./actors/config.js";
export type {
  LoomConfig,
  RetentionConfig,
  ExecutionOptions,
  SecurityOptions,
  ComplianceOptions,
  ObservabilityOptions,
  RedactOption,
} from "./actors/config.js";
export { JournaledActor } from "./actors/journal/actor.js";
export type { ReplayReport } from "./actors/journal/execution.js";
export { realClock, simulatedClock } from "./actors/clock.js";
export type { Clock, SimulatedClock } from "./actors/clock.js";
export { createToolEffect, createTaskEffect } from "./actors/effects/effect.js";
export type {
  AiSdkTool,
  Effect,
  EffectContext,
  EffectKind,
  EffectMiddleware,
  ModelInfo,
  ToolModelOutputOptions,
  ToolOptions,
} from "./actors/effects/effect.js";
export { ToolInputError } from "./actors/effects/toolSchema.js";
export type { JsonSchema, ToolInputSchema } from "./actors/effects/toolSchema.js";
export type { InferSchemaInput, InferSchemaOutput, StandardSchemaV1 } from "./actors/effects/standardSchema.js";
export { createLlmEffect } from "./actors/agents/model.js";
export type {
  LlmEffectOptions,
  Model,
  Message,
  ModelCallOptions,
  ModelReply,
  ModelRequest,
  ReplyPart,
  ReplyToolCall,
  ToolCall,
  ToolChoice,
  ToolModelOutput,
  ToolSpec,
  Usage,
} from "./actors/agents/model.js";
export { DEFAULT_MODEL_RETRY } from "./actors/agents/modelRetry.js";
export { shouldRetryModelCall } from "./actors/agents/retryableErrors.js";
export type { ModelRetryOptions } from "./actors/agents/modelRetry.js";
export { DELTA_TYPES } from "./actors/agents/deltas.js";
export type { ModelDelta } from "./actors/agents/deltas.js";
export { STREAM_PART_TYPES } from "./actors/agents/streams.js";
export type { ExecutionStream, StreamOptions, StreamPart } from "./actors/agents/streams.js";
export type {
  LoomworkProviderMetadata,
  UIMessageChunk,
  UIMessageFinishReason,
  UIMessageLike,
  UIMessageStreamOptions,
} from "./actors/agents/uiMessageStream.js";
export { convertToToolApprovalEvents } from "./actors/agents/uiApprovals.js";
export { AgentChatTransport } from "./actors/agents/uiChatTransport.js";
export type { AgentChatRequest, AgentChatTransportOptions } from "./actors/agents/uiChatTransport.js";
export { TOOL_APPROVAL_EVENT } from "./actors/agents/approvals.js";
export type { ApprovalPathStep, PendingApproval, TreePendingApproval } from "./actors/agents/approvals.js";
export type { ToolApprovalEvent } from "./machines/helpers/messages.js";
export { EffectStoppedError, TRANSIENT_EXECUTION_ID } from "./actors/effects/chain.js";
export type { KillSwitch } from "./actors/effects/chain.js";
// The effect chain, the capability ring, retries and timeouts.
export { effectChain, CHAIN_LAYERS, CHAIN_OUTCOMES } from "./machines/effectChain.js";
export type { ChainLayer, ChainOutcome, EffectChainEvent } from "./machines/effectChain.js";
export { invokeAs, invokedAs } from "./machines/helpers/invokeAs.js";
export type { TaskKind } from "./machines/helpers/invokeAs.js";
export { QuotaExceededError } from "./actors/effects/capabilities.js";
export { GrantDeniedError, GuardRefusedError } from "./actors/effects/ringLayers.js";
export type {
  CapabilitiesOptions,
  QuotaOptions,
  GuardVerdict,
  ExecutionUsage,
  TreeUsage,
} from "./actors/effects/capabilities.js";
export { retryMiddleware, timeoutMiddleware, EffectTimeoutError } from "./actors/effects/retry.js";
export type { RetryOptions, Next } from "./actors/effects/retry.js";
export type { ResumeUnfinishedOptions, ResumeUnfinishedResult } from "./actors/journal/unfinished.js";
export type { ExecutionsQuery } from "./actors/journal/executionsQuery.js";
export type { RuntimeEvents, Warning } from "./actors/bus.js";
export {
  NonDeterminismError,
  ConfigError,
  UnknownEffectError,
  DuplicateExecutionError,
  UnknownExecutionError,
  LifecycleNotLoadedError,
  ExecutionFailedError,
  ExecutionStoppedError,
  NonJsonOutputError,
  ChildLimitError,
  DuplicateSystemIdError,
  AppClosedError,
  ModelReplyError,
  UnknownLogicVersionError,
  ReservedEventError,
  SubmitConflictError,
} from "./actors/errors.js";
export { checkExternalEvent, RESERVED_EVENT_PREFIXES } from "./actors/journal/externalEvents.js";
export { ApprovalAmbiguousError, ApprovalMalformedError, ApprovalNotWaitingError } from "./actors/agents/approvals.js";
export type { SerializedError } from "./actors/errors.js";
export { stepInput, effectActor } from "./machines/helpers/effectActor.js";

export { memoryStores, MemoryEventStore, MemoryContentStore, MemoryKeyStore } from "./stores/memory.js";
export {
  LoomworkError,
  LoomworkTypeError,
  ConcurrencyError,
  JournalCorruptionError,
  StorageQuotaError,
  WriterLockedError,
  WriterFailedError,
  ReadOnlyStoreError,
  SubjectErasedError,
  KeyMissingError,
  MalformedIdError,
  InsecureContextError,
} from "./stores/errors.js";
export type { JournalDamageKind, JournalSurvivors, JournalCorruptionDetails } from "./stores/errors.js";
export { ERROR_CODES, WARNING_CODES } from "./actors/constants.js";
export type { ErrorCode } from "./actors/constants.js";
export {
  EVENT_SCHEMA,
  EXECUTION_STARTED,
  EVENT_RECEIVED,
  STEP_COMPLETED,
  STEP_FAILED,
  TIMER_SET,
  TRANSITION,
  EXECUTION_ENDED,
  PATCH_MARKED,
  EXECUTION_MIGRATED,
  ERASURE_CONTENT_DELETE_INTENDED,
  ERASURE_CONTENT_DELETED,
} from "./stores/schema.js";
export { expandRecords, RecordExpander } from "./stores/recordFormat.js";
export { EVENT_STORE_SPI_VERSION, CONTENT_STORE_SPI_VERSION, KEY_STORE_SPI_VERSION } from "./stores/types.js";
export type {
  Stores,
  EventStore,
  ContentStore,
  KeyStore,
  JournalRecord,
  StoredRecord,
  RecordType,
  RecordOf,
  ExecutionStartedRecord,
  EventReceivedRecord,
  StepCompletedRecord,
  StepFailedRecord,
  TimerSetRecord,
  TransitionRecord,
  ExecutionEndedRecord,
  PatchMarkedRecord,
  ExecutionMigratedRecord,
  ErasureContentDeleteIntendedRecord,
  ErasureContentDeletedRecord,
  ExecutionInfo,
  ExecutionDamage,
  ExecutionStatus,
  StoredSnapshot,
  ArchiveSegment,
  ContentAddress,
  ContentInfo,
  ContentPutOptions,
} from "./stores/types.js";

// The agent loop, providers, the summarizer and taint.
export {
  agentLoop$,
  configureAgentLoopDefaults,
  DEFAULT_STATE_GROWTH_WARN_BYTES,
  DEFAULT_MAX_TURNS,
} from "./actors/agents/agentLoop.js";
export type { AgentLoopConfig } from "./actors/agents/agentLoop.js";
export type {
  AgentLoopInput,
  AgentLoopOutput,
  AgentLoopContext,
  AgentLoopTool,
  AgentLoopHandoff,
} from "./machines/agentLoop.js";
export { agentTool, type AgentToolOptions } from "./actors/agents/agentTool.js";
export { handoff, handoffTranscript, type HandoffOptions } from "./actors/agents/handoff.js";
export {
  createSummarizerEffect,
  SummarizerEmptyError,
  SUMMARIZER_INPUT_ORIGIN,
  DEFAULT_SUMMARIZER_INSTRUCTION,
} from "./actors/agents/summarizer.js";
export type { SummarizerOptions, SummarizerOutput } from "./actors/agents/summarizer.js";
export { scriptedModel } from "./adapters/scripted/index.js";
export type { Script } from "./adapters/scripted/index.js";
export {
  tainted,
  isTainted,
  summarizerText,
  SUMMARIZER_TEXT_TRUNCATED,
  fencedMessages,
  TAINT_SCAN_MAX_NODES,
  UNSCANNED_TAINT_ORIGIN,
} from "./machines/helpers/taint.js";
export type { Tainted } from "./machines/helpers/taint.js";
export { conversation$ } from "./actors/agents/conversation.js";
export type { ConversationConfig } from "./actors/agents/conversation.js";
export { fromAiSdk, AiSdkReplyError, AI_SDK_SPECIFICATION_VERSIONS } from "./adapters/ai-sdk/index.js";
export type { AiSdkLanguageModel, AiSdkSpecificationVersion, FromAiSdkOptions } from "./adapters/ai-sdk/index.js";

// Content, claim-check and per-subject encryption.
export {
  claimCheckMiddleware,
  previewDigest,
  resolveClaimCheck,
  RetainedContentMissingError,
  isClaimCheckEnvelope,
  DEFAULT_CLAIM_CHECK_CAP_BYTES,
  DEFAULT_CLAIM_CHECK_PREVIEW_CHARS,
  CLASSIC_CLAIM_CHECK_CAP_BYTES,
} from "./actors/effects/claimCheck.js";
export type {
  ClaimCheckEnvelope,
  ClaimCheckOptions,
  PreviewDigest,
  Digest,
  ResolveClaimCheckOptions,
} from "./actors/effects/claimCheck.js";
export type { ClaimCheckConfig } from "./actors/effects/claimCheckPreset.js";
export { EncryptingContentStore, ContentAuthenticationError } from "./stores/encryptingContentStore.js";
export { RecordAuthenticationError } from "./stores/sealingErrors.js";

// Per-subject record sealing and the errors an app's own calls meet when a subject is erased or being erased.
export { createJournalCodec } from "./actors/journal/sealing.js";
export { ExecutionErasedError, ErasureInProgressError } from "./actors/lifecycle/errors.js";
export { HistoryInUseError } from "./actors/errors.js";
export { sentinelClaimCheck } from "./actors/effects/sentinel.js";
export type { SentinelOptions } from "./actors/effects/sentinel.js";
// API.md's lifecycle names, kept here as well: the minimal app's bundle drops them when it does not call
// them (bench/bundle.ts). Everything else of the data lifecycle is in loomwork/lifecycle.
export { visitCitedAddresses } from "./actors/lifecycle/citations.js";
export { sweepUnpinnedContent, eraseSubject, exportSubject } from "./actors/lifecycle/standalone.js";
export { ContentCopiesRemainError } from "./actors/lifecycle/errors.js";
// Time travel into the XState inspector (docs/inspector.md).
export { replayIntoInspector } from "./actors/inspectReplay.js";
export type { ReplayIntoInspectorOptions, InspectorReplay } from "./actors/inspectReplay.js";
