import { Schema } from "effect"
import { ToolErrorCode } from "./ToolFailure.js"

/** Risk of a tool, ordered: READ_ONLY < LOCAL_WRITE < NETWORK < DESTRUCTIVE. */
export const SafetyClass = Schema.Literal("READ_ONLY", "LOCAL_WRITE", "NETWORK", "DESTRUCTIVE")
export type SafetyClass = typeof SafetyClass.Type

export const safetyRank: Readonly<Record<SafetyClass, number>> = {
  READ_ONLY: 0,
  LOCAL_WRITE: 1,
  NETWORK: 2,
  DESTRUCTIVE: 3
}

export const atOrBelow = (safetyClass: SafetyClass, ceiling: SafetyClass): boolean =>
  safetyRank[safetyClass] <= safetyRank[ceiling]

export const SideEffectLevel = Schema.Literal("none", "local_write", "external_write")
export type SideEffectLevel = typeof SideEffectLevel.Type

export const ToolIdPattern = /^[a-z][a-z0-9_\-.]+$/

export const ToolId = Schema.String.pipe(
  Schema.pattern(ToolIdPattern, { message: () => "a tool id matching ^[a-z][a-z0-9_\\-.]+$" })
)

/** One declared argument (seed 002, ToolArgSchema). */
export class ToolArgSchema extends Schema.Class<ToolArgSchema>("ToolArgSchema")({
  name: Schema.NonEmptyString,
  type: Schema.Literal("string", "number", "integer", "boolean", "object", "array", "any"),
  required: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
}) {}

export class ToolReturnSchema extends Schema.Class<ToolReturnSchema>("ToolReturnSchema")({
  type: Schema.optionalWith(Schema.String, { default: () => "object" }),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
}) {}

const StringList = Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })

/** A tool's governed contract (seed 002, ToolSpec) plus side-effect level, identity scopes and risk tags. */
export class ToolSpec extends Schema.Class<ToolSpec>("ToolSpec")({
  toolId: ToolId,
  name: Schema.NonEmptyTrimmedString,
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  safetyClass: Schema.optionalWith(SafetyClass, { default: () => "READ_ONLY" as const }),
  idempotent: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  argsSchema: Schema.optionalWith(Schema.Array(ToolArgSchema), { default: () => [] }),
  /**
   * The arguments' full JSON Schema (literals, patterns, bounds, nested shapes), flat: what the model is shown.
   * Filled in at registration from the argument Schema when not given.
   */
  argsJsonSchema: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  returnsSchema: Schema.optionalWith(ToolReturnSchema, { default: () => ToolReturnSchema.make({}) }),
  requiresPermission: StringList,
  allowlistedAgents: StringList,
  emitTrace: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  emitMetric: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  maxRetries: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 5)), { default: () => 2 }),
  timeoutMs: Schema.optionalWith(Schema.Int.pipe(Schema.between(100, 60_000)), { default: () => 5_000 }),
  sideEffectLevel: Schema.optionalWith(SideEffectLevel, { default: () => "none" as const }),
  requiredIdentityScopes: StringList,
  riskTags: StringList
}) {}

/** What a caller writes to declare a spec: the encoded form, defaults optional. */
export type ToolSpecInput = typeof ToolSpec.Encoded

export class ToolProvenance extends Schema.Class<ToolProvenance>("ToolProvenance")({
  sourceUri: Schema.String,
  freshnessS: Schema.optional(Schema.Number)
}) {}

/** The outcome of one tool call; every failure is a result, never an exception (seed 002, ToolResult). */
export class ToolResult extends Schema.Class<ToolResult>("ToolResult")({
  callId: Schema.String,
  toolId: Schema.String,
  success: Schema.Boolean,
  data: Schema.optionalWith(Schema.Unknown, { default: () => null }),
  errorCode: Schema.optional(ToolErrorCode),
  errorMessage: Schema.optional(Schema.String),
  latencyMs: Schema.Number,
  retries: Schema.Int,
  traceId: Schema.String,
  spanId: Schema.String,
  provenance: Schema.optional(ToolProvenance)
}) {
  /**
   * A success (seed 002's `ToolResult.ok`). The ids are the caller's to give: the executor fills them in the results
   * it returns; a result built by hand (a test, a dry run) has empty ones unless given.
   */
  static ok(toolId: string, data: unknown, options: ToolResultOptions = {}): ToolResult {
    return new ToolResult({ ...resultIds(options), toolId, success: true, data })
  }

  /** A failure with its code and message (seed 002's `ToolResult.error`). */
  static error(toolId: string, errorCode: ToolErrorCode, errorMessage: string, options: ToolResultOptions = {}): ToolResult {
    return new ToolResult({ ...resultIds(options), toolId, success: false, data: null, errorCode, errorMessage })
  }
}

/**
 * A ToolResult from fields already known valid, every one given (`data` too): the object `new ToolResult(fields,
 * true)` makes (its prototype, these own fields), without the class constructor's copy and defaults pass. Built on
 * every tool call, where that pass cost about as much as a call's span id.
 */
export const knownToolResult = (fields: Omit<ToolResult, "data"> & { readonly data: unknown }): ToolResult =>
  Object.assign(Object.create(ToolResult.prototype) as ToolResult, fields)

/** What `ToolResult.ok` and `ToolResult.error` take besides the tool and its outcome. */
export interface ToolResultOptions {
  readonly latencyMs?: number
  readonly retries?: number
  readonly callId?: string
  readonly traceId?: string
  readonly spanId?: string
  readonly provenance?: ToolProvenance
}

const resultIds = (options: ToolResultOptions) => ({
  callId: options.callId ?? "",
  traceId: options.traceId ?? "",
  spanId: options.spanId ?? "",
  latencyMs: options.latencyMs ?? 0,
  retries: options.retries ?? 0,
  ...(options.provenance === undefined ? {} : { provenance: options.provenance })
})

/** What a domain agent declares it needs at registration (seed 002, AgentCapabilities). */
export class AgentCapabilities extends Schema.Class<AgentCapabilities>("AgentCapabilities")({
  agentName: Schema.NonEmptyString,
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  requiredPacks: StringList,
  toolAllowlist: StringList,
  decisionKeys: StringList,
  safetyClassCeiling: Schema.optionalWith(SafetyClass, { default: () => "READ_ONLY" as const }),
  version: Schema.optionalWith(Schema.String, { default: () => "1.0.0" })
}) {}

/** One item of compiled context handed to a model (output of a context compiler). */
export class CompiledContextItem extends Schema.Class<CompiledContextItem>("CompiledContextItem")({
  itemId: Schema.String,
  kind: Schema.String,
  content: Schema.String,
  source: Schema.optionalWith(Schema.String, { default: () => "" }),
  priority: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  tokenEstimate: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  provenance: Schema.optional(ToolProvenance)
}) {}
