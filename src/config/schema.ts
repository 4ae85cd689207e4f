import { Schema } from "effect"
import { providers } from "./literals.js"
import { AskTimeout, askTimeoutExpectation } from "./askTimeout.js"
import { McpServers, mcpServersExpectation } from "./mcpServers.js"
import { SkillsPaths, skillsPathsExpectation } from "./skillsPaths.js"
import { WebSearchConfig, webSearchExpectation } from "./webSearch.js"
import { McpToolBudget, mcpToolBudgetExpectation } from "./mcpToolBudget.js"
import { ToolLists, toolListsExpectation } from "./toolLists.js"
import { Limits, limitsExpectation } from "./limits.js"
import { SubagentsConfig, subagentsDefaults, subagentsExpectation } from "./subagents.js"
import { JobsConfig, jobsDefaults, jobsExpectation } from "./jobs.js"
import { MediaConfig, mediaDefaults, mediaExpectation } from "./media.js"
import { OtelConfig, otelExpectation } from "./otel.js"
import { RetentionConfig, retentionDefaults, retentionExpectation } from "./retention.js"
import { Vision, visionExpectation } from "./vision.js"
import { TranscriptionModel, transcriptionModelExpectation } from "./transcriptionModel.js"
import { DatabaseConfig, databaseExpectation } from "./database.js"

export const Provider = Schema.Literal(...providers)
export type Provider = typeof Provider.Type

export const ModelApi = Schema.Literal("responses", "chat")
export const ToolScope = Schema.Literal("full", "write", "read")
/** `per-person`: each paired user, group and thread has a conversation of its own; `shared`: one for everybody. */
export const ConversationsMode = Schema.Literal("per-person", "shared")
/** How much of the agent folder a non-operator's file tools reach: `shared/` only (the default), or all of it. */
export const MemoryReach = Schema.Literal("shared", "all")
export type MemoryReach = typeof MemoryReach.Type
export type ToolScope = typeof ToolScope.Type
export const ApprovalMode = Schema.Literal("auto", "ask", "deny")
export type ApprovalMode = typeof ApprovalMode.Type
export const SafetyMode = Schema.Literal("NORMAL", "SAFE", "STRICT")
export type SafetyMode = typeof SafetyMode.Type
export const ContractEnforcement = Schema.Literal("off", "observe", "enforce")
export type ContractEnforcement = typeof ContractEnforcement.Type

const PositiveInt = Schema.Int.pipe(Schema.positive()).annotations({ identifier: "a positive integer" })
const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative()).annotations({ identifier: "an integer ≥ 0" })
const NonNegative = Schema.Number.pipe(Schema.nonNegative()).annotations({ identifier: "a number ≥ 0" })
const Text = Schema.NonEmptyTrimmedString.annotations({ identifier: "a non-empty string" })
export const isHttpUrl = (text: string): boolean => {
  if (!URL.canParse(text)) return false
  const { protocol } = new URL(text)
  return protocol === "http:" || protocol === "https:"
}
/** A base URL the model client can use: absolute, http or https. */
export const HttpUrl = Text.pipe(Schema.filter(isHttpUrl)).annotations({ identifier: "an http(s) URL" })
const EnvName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)).annotations({
  identifier: "an environment variable name"
})
/** `"HH:MM-HH:MM"` in the agent's zone; a start after the end spans midnight (`"22:00-06:00"`). */
export const ActiveHours = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/)
).annotations({ identifier: "a time range HH:MM-HH:MM" })
/** A browser origin: scheme, host and port only (`https://example.com`, `http://localhost:3000`). */
export const Origin = Text.pipe(Schema.filter((text) => isHttpUrl(text) && new URL(text).origin === text)).annotations({ identifier: "an origin such as \"https://example.com\"" })

export const Port = Schema.Int.pipe(Schema.between(1, 65535)).annotations({ identifier: "a port number 1–65535" })

/** The per-turn budget of an agent (DESIGN.md); the kernel's RunBudget keeps smaller library defaults. */
export class TurnBudget extends Schema.Class<TurnBudget>("TurnBudget")({
  maxToolCalls: Schema.optionalWith(PositiveInt, { default: () => 200 }),
  maxPromptTokens: Schema.optionalWith(PositiveInt, { default: () => 3_000_000 }),
  maxLatencyMs: Schema.optionalWith(PositiveInt, { default: () => 900_000 }),
  maxCostUsdCents: Schema.optionalWith(NonNegative, { default: () => 500 })
}) {}

const budgetDefaults = (): TurnBudget => TurnBudget.make({})

/** US dollars per million tokens; cached input and prompt-cache writes cost the input price unless given. */
export const ModelPriceConfig = Schema.Struct({
  input: NonNegative,
  cachedInput: Schema.optional(NonNegative),
  cacheWrite: Schema.optional(NonNegative),
  output: NonNegative
})

/**
 * `.kern/config.json`. Every key is optional in the file; the decoded value carries the defaults.
 * `name` has no static default: the loader fills it with the folder name.
 */
export const KernConfigFields = {
  name: Schema.optional(Text),
  provider: Schema.optionalWith(Provider, { default: () => "openrouter" as const }),
  model: Schema.optional(Text),
  baseURL: Schema.optional(HttpUrl),
  apiKeyEnv: Schema.optional(Text),
  api: Schema.optional(ModelApi),
  embeddingModel: Schema.optional(Schema.Union(Text, Schema.Literal(false))),
  summaryModel: Schema.optional(Text),
  heartbeatModel: Schema.optional(Text),
  toolScope: Schema.optionalWith(ToolScope, { default: () => "full" as const }),
  approvalMode: Schema.optionalWith(ApprovalMode, { default: () => "auto" as const }),
  approvalTimeout: Schema.optionalWith(PositiveInt, { default: () => 300 }),
  askTimeout: Schema.optionalWith(AskTimeout, { default: () => 300 }),
  safetyMode: Schema.optionalWith(SafetyMode, { default: () => "NORMAL" as const }),
  maxSteps: Schema.optionalWith(PositiveInt, { default: () => 30 }),
  maxContextTokens: Schema.optionalWith(PositiveInt, { default: () => 100_000 }),
  maxToolResultChars: Schema.optionalWith(PositiveInt, { default: () => 20_000 }),
  summaryBudget: Schema.optionalWith(
    Schema.Number.pipe(Schema.between(0, 1)).annotations({ identifier: "a number from 0 to 1" }),
    { default: () => 0.75 }
  ),
  recall: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  autoRecall: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  autoRecallMaxDistance: Schema.optionalWith(
    Schema.Number.pipe(Schema.between(0, 2)).annotations({ identifier: "a number from 0 to 2" }),
    { default: () => 0.95 }
  ),
  autoRecallTokens: Schema.optionalWith(PositiveInt, { default: () => 2_000 }),
  heartbeatInterval: Schema.optionalWith(NonNegativeInt, { default: () => 60 }),
  activeHours: Schema.optional(ActiveHours),
  staleKnowledgeDays: Schema.optionalWith(PositiveInt, { default: () => 30 }),
  timezone: Schema.optional(Text),
  host: Schema.optionalWith(Text, { default: () => "127.0.0.1" }),
  port: Schema.optional(Port),
  corsOrigins: Schema.optionalWith(Schema.Array(Origin), { default: () => [] }),
  budget: Schema.optionalWith(TurnBudget, { default: budgetDefaults }),
  contractEnforcement: Schema.optionalWith(ContractEnforcement, { default: () => "observe" as const }),
  workspaceGuard: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  autoCommit: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  prices: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ModelPriceConfig }), { default: () => ({}) }),
  bashEnv: Schema.optionalWith(Schema.Array(EnvName), { default: () => [] }),
  conversations: Schema.optionalWith(ConversationsMode, { default: () => "per-person" as const }),
  maxConcurrentTurns: Schema.optionalWith(PositiveInt, { default: () => 2 }),
  mcpServers: Schema.optionalWith(McpServers, { default: () => ({}) }),
  skillsPaths: Schema.optionalWith(SkillsPaths, { default: () => [] }),
  webSearch: Schema.optional(WebSearchConfig),
  mcpToolBudget: McpToolBudget,
  tools: Schema.optionalWith(ToolLists, { default: () => ({ block: [] }) }),
  limits: Schema.optionalWith(Limits, { default: () => ({}) }),
  subagents: Schema.optionalWith(SubagentsConfig, { default: subagentsDefaults }),
  jobs: Schema.optionalWith(JobsConfig, { default: () => jobsDefaults }),
  media: Schema.optionalWith(MediaConfig, { default: () => mediaDefaults }),
  otel: Schema.optional(OtelConfig),
  retention: Schema.optionalWith(RetentionConfig, { default: () => retentionDefaults }),
  vision: Schema.optional(Vision),
  transcriptionModel: Schema.optional(TranscriptionModel),
  database: Schema.optional(DatabaseConfig)
} as const

export const KernConfigFile = Schema.Struct(KernConfigFields)
export type KernConfigFile = typeof KernConfigFile.Type

/** The effective configuration: the file's keys with defaults, `name` resolved. */
export interface KernConfig extends Omit<KernConfigFile, "name"> {
  readonly name: string
}

const oneOf = (...values: ReadonlyArray<string>) => `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`

/** What each key accepts, as the error message says it. */
export const expectations: { readonly [K in keyof typeof KernConfigFields]: string } & {
  readonly [K in keyof typeof TurnBudget.fields as `budget.${K}`]: string
} = {
  name: "a non-empty string",
  provider: oneOf(...Provider.literals),
  model: "a non-empty string (a model id such as \"openai/gpt-4.1\")",
  baseURL: "an http(s) URL such as \"http://localhost:11434/v1\"",
  apiKeyEnv: "a non-empty string (the name of an environment variable)",
  api: oneOf(...ModelApi.literals),
  embeddingModel: "a model id string, or false to turn embeddings off",
  summaryModel: "a non-empty string (a model id)",
  heartbeatModel: "a non-empty string (a model id)",
  toolScope: oneOf(...ToolScope.literals),
  approvalMode: oneOf(...ApprovalMode.literals),
  approvalTimeout: "a positive integer (seconds an approval waits for an answer before the call is denied)",
  askTimeout: askTimeoutExpectation,
  safetyMode: oneOf(...SafetyMode.literals),
  maxSteps: "a positive integer",
  maxContextTokens: "a positive integer",
  maxToolResultChars: "a positive integer",
  summaryBudget: "a number from 0 to 1 (0 turns summaries off)",
  recall: "true or false",
  autoRecall: "true or false",
  autoRecallMaxDistance: "a number from 0 to 2 (cosine distance; hits farther away are not recalled)",
  autoRecallTokens: "a positive integer (tokens the recalled block may take)",
  heartbeatInterval: "an integer ≥ 0 (minutes; 0 turns the heartbeat off)",
  activeHours: "a time range \"HH:MM-HH:MM\" in the agent's timezone, e.g. \"08:00-22:00\"",
  staleKnowledgeDays: "a positive integer (days)",
  timezone: "a non-empty string (an IANA zone such as \"Europe/Berlin\")",
  host: "a non-empty string (a host name or address)",
  port: "an integer port number from 1 to 65535",
  corsOrigins: "an array of origins allowed to call the HTTP API from a browser, e.g. [\"https://example.com\"]",
  budget: "an object with maxToolCalls, maxPromptTokens, maxLatencyMs, maxCostUsdCents",
  "budget.maxToolCalls": "a positive integer",
  "budget.maxPromptTokens": "a positive integer",
  "budget.maxLatencyMs": "a positive integer (milliseconds)",
  "budget.maxCostUsdCents": "a number ≥ 0 (US cents)",
  contractEnforcement: oneOf(...ContractEnforcement.literals),
  workspaceGuard: "true or false",
  autoCommit: "true or false",
  prices: "an object of model id → { input, cachedInput?, cacheWrite?, output } in US dollars per million tokens",
  bashEnv: "an array of environment variable names (such as [\"GITHUB_TOKEN\"]) that bash may inherit",
  conversations: oneOf(...ConversationsMode.literals),
  maxConcurrentTurns: "a positive integer (turns of different conversations that may run at once)",
  mcpServers: mcpServersExpectation,
  skillsPaths: skillsPathsExpectation,
  webSearch: webSearchExpectation,
  mcpToolBudget: mcpToolBudgetExpectation,
  tools: toolListsExpectation,
  limits: limitsExpectation,
  subagents: subagentsExpectation,
  jobs: jobsExpectation,
  media: mediaExpectation,
  otel: otelExpectation,
  retention: retentionExpectation,
  vision: visionExpectation,
  transcriptionModel: transcriptionModelExpectation,
  database: databaseExpectation
}

export const knownKeys: ReadonlySet<string> = new Set(Object.keys(KernConfigFields))
export const knownBudgetKeys: ReadonlySet<string> = new Set(Object.keys(TurnBudget.fields))
