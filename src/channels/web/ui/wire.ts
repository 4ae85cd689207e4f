// The server's JSON as the browser sees it. The UI ships without Effect (its Schema would triple the bundle), so these
// narrow guards decode at the boundary instead, typed by api.ts's Schemas so that a change of the wire breaks the
// build: a frame that does not match is dropped, never trusted by a cast.

import type {
  AgentEvent,
  AgentEventType,
  ContextSegmentsResponse,
  ErrorEvent,
  PendingApprovalInfo,
  PendingQuestionInfo,
  SegmentInfo,
  SegmentsResponse,
  StatusResponse
} from "../api.js"
import type { Usage } from "../../../session/messages.js"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
export type JsonObject = { readonly [key: string]: Json }

export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)
export const str = (o: JsonObject, key: string): string | undefined => {
  const v = o[key]
  return typeof v === "string" ? v : undefined
}
export const num = (o: JsonObject, key: string): number | undefined => {
  const v = o[key]
  return typeof v === "number" && Number.isFinite(v) ? v : undefined
}
export const bool = (o: JsonObject, key: string): boolean | undefined => {
  const v = o[key]
  return typeof v === "boolean" ? v : undefined
}
export const arr = (o: JsonObject, key: string): ReadonlyArray<Json> => {
  const v = o[key]
  return Array.isArray(v) ? v : []
}
export const obj = (o: JsonObject, key: string): JsonObject | undefined => {
  const v = o[key]
  return isObject(v) ? v : undefined
}

export const parseJson = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

/** A stored file as the page shows it (GET /history's Attachment, POST /message's answer, an outgoing event's file). */
export interface FileView {
  readonly id: string
  readonly name: string
  readonly mediaType: string
  readonly kind: string
  readonly bytes: number
  readonly pages?: number | undefined
}

/** Only a media store id ever becomes part of a URL: anything else the server might send is dropped. */
const mediaId = /^med_[0-9a-f]{24}$/

export const decodeFile = (u: Json | undefined): FileView | undefined => {
  if (!isObject(u)) return undefined
  const id = str(u, "id")
  if (id === undefined || !mediaId.test(id)) return undefined
  const pages = num(u, "pages")
  return {
    id,
    name: str(u, "name") ?? "file",
    mediaType: str(u, "mediaType") ?? "application/octet-stream",
    kind: str(u, "kind") ?? "file",
    bytes: num(u, "bytes") ?? 0,
    ...(pages === undefined ? {} : { pages })
  }
}

/**
 * The events of `GET /events`, as their Schemas describe them (src/turn/TurnEvent.ts for a turn's, AgentEvent.ts for
 * the agent's own; types only: nothing of Effect is bundled).
 */
export type ServerEvent = AgentEvent

export const eventTypes: ReadonlyArray<AgentEventType> = [
  "incoming",
  "thinking",
  "text-delta",
  "tool-call",
  "tool-result",
  "recall",
  "context",
  "retry",
  "finish",
  "error",
  "outgoing",
  "heartbeat",
  "approval",
  "approval-resolved",
  "question",
  "question-resolved",
  "limit",
  "reset"
]

const usageOf = (o: JsonObject | undefined): Usage => ({
  inputTokens: (o && num(o, "inputTokens")) ?? 0,
  outputTokens: (o && num(o, "outputTokens")) ?? 0,
  cachedInputTokens: (o && num(o, "cachedInputTokens")) ?? 0,
  cacheWriteTokens: (o && num(o, "cacheWriteTokens")) ?? 0,
  costUsdCents: (o && num(o, "costUsdCents")) ?? 0
})

const heartbeatOutcomes = ["sent", "skipped", "ran", "failed"] as const
const outcomeOf = (s: string | undefined) => heartbeatOutcomes.find((o) => o === s)
const approvalOutcomes = ["approved", "denied", "timeout"] as const
const approvalOutcomeOf = (s: string | undefined) => approvalOutcomes.find((o) => o === s)

/** A call waiting for a person, as GET /approvals lists it and the `approval` event announces it. */
export type PendingApproval = PendingApprovalInfo

/** The fields every pending approval has; undefined when one is missing or mistyped. `args` may be any JSON. */
export const decodePendingApproval = (u: JsonObject): PendingApproval | undefined => {
  const id = str(u, "id")
  const toolId = str(u, "toolId")
  const reason = str(u, "reason")
  const iface = str(u, "interface")
  const channel = str(u, "channel")
  const userId = str(u, "userId")
  const expiresAt = str(u, "expiresAt")
  const requestedAt = str(u, "requestedAt")
  if (
    id === undefined || toolId === undefined || reason === undefined || iface === undefined || channel === undefined ||
    userId === undefined || requestedAt === undefined || expiresAt === undefined || !("args" in u)
  ) return undefined
  return {
    id,
    toolId,
    args: u["args"] ?? null,
    reason,
    interface: iface,
    channel,
    userId,
    requestedAt,
    expiresAt
  }
}

/** GET /approvals' answer; undefined when it is not one. Items that do not decode are left out. */
export const decodeApprovals = (u: Json | undefined): ReadonlyArray<PendingApproval> | undefined => {
  if (!isObject(u) || !Array.isArray(u["approvals"])) return undefined
  return arr(u, "approvals").flatMap((item) => {
    const pending = isObject(item) ? decodePendingApproval(item) : undefined
    return pending === undefined ? [] : [pending]
  })
}

/** Why a turn failed, as the error event carries it (src/turn/TurnFailure.ts, encoded). */
export type TurnFailure = typeof ErrorEvent.Type["failure"]
type FailureOf<Tag extends TurnFailure["_tag"]> = Extract<TurnFailure, { readonly _tag: Tag }>

const providerReasons = ["network", "auth", "rate_limit", "billing", "provider", "no_output"] as const
const budgetCaps = ["maxToolCalls", "maxPromptTokens", "maxLatencyMs", "maxCostUsdCents"] as const
const notWrittenReasons = ["disk-full", "io"] as const
const spendCaps = ["perDay", "perUser", "perChannel"] as const
const spendMeasures = ["usdCents", "tokens"] as const
// Each list names every value its Schema allows: one the server adds and the UI does not know breaks the build.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false
export const failureLiteralsComplete: [
  Same<typeof providerReasons[number], FailureOf<"ProviderFailed">["reason"]>,
  Same<typeof budgetCaps[number], FailureOf<"BudgetExhausted">["cap"]>,
  Same<typeof notWrittenReasons[number], FailureOf<"SessionNotWritten">["reason"]>,
  Same<typeof spendCaps[number], FailureOf<"BudgetExceeded">["cap"]>,
  Same<typeof spendMeasures[number], FailureOf<"BudgetExceeded">["measure"]>
] = [true, true, true, true, true]

/** A spend cap reached, as the `BudgetExceeded` failure and the `limit` event carry it. */
const decodeReached = (u: JsonObject) => {
  const cap = oneOf(spendCaps, str(u, "cap"))
  const measure = oneOf(spendMeasures, str(u, "measure"))
  const limit = num(u, "limit")
  const spent = num(u, "spent")
  const key = str(u, "key")
  const day = str(u, "day")
  if (cap === undefined || measure === undefined || limit === undefined || spent === undefined || key === undefined || day === undefined) {
    return undefined
  }
  return { cap, measure, limit, spent, key, day }
}

const oneOf = <T extends string>(all: ReadonlyArray<T>, s: string | undefined): T | undefined => all.find((x) => x === s)

/** A failure as the Schema encodes it; undefined when its tag is unknown or a field is missing or mistyped. */
export const decodeFailure = (u: Json | undefined): TurnFailure | undefined => {
  if (!isObject(u)) return undefined
  const message = str(u, "message")
  if (message === undefined) return undefined
  switch (str(u, "_tag")) {
    case "ProviderFailed": {
      const reason = oneOf(providerReasons, str(u, "reason"))
      const status = num(u, "status")
      const retryAfterSeconds = num(u, "retryAfterSeconds")
      if (reason === undefined) return undefined
      return {
        _tag: "ProviderFailed",
        reason,
        message,
        ...(status === undefined ? {} : { status }),
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds })
      }
    }
    case "WatchdogFired":
      return { _tag: "WatchdogFired", message }
    case "BudgetExhausted": {
      const cap = oneOf(budgetCaps, str(u, "cap"))
      const limit = num(u, "limit")
      const toolCallsUsed = num(u, "toolCallsUsed")
      const promptTokensUsed = num(u, "promptTokensUsed")
      const costUsdCentsUsed = num(u, "costUsdCentsUsed")
      if (
        cap === undefined || limit === undefined || toolCallsUsed === undefined || promptTokensUsed === undefined ||
        costUsdCentsUsed === undefined
      ) return undefined
      return { _tag: "BudgetExhausted", cap, limit, toolCallsUsed, promptTokensUsed, costUsdCentsUsed, message }
    }
    case "BudgetExceeded": {
      const reached = decodeReached(u)
      return reached === undefined ? undefined : { _tag: "BudgetExceeded", code: "BUDGET_EXCEEDED", ...reached, message }
    }
    case "StepLimitReached": {
      const maxSteps = num(u, "maxSteps")
      return maxSteps === undefined ? undefined : { _tag: "StepLimitReached", maxSteps, message }
    }
    case "SessionNotWritten": {
      const reason = oneOf(notWrittenReasons, str(u, "reason"))
      return reason === undefined ? undefined : { _tag: "SessionNotWritten", reason, message }
    }
    case "Stopped": {
      const by = str(u, "by")
      return by === undefined ? undefined : { _tag: "Stopped", by, message }
    }
    default:
      return undefined
  }
}

/** Decodes one SSE frame's data; undefined when it is not a kern event (a required field missing or mistyped). */
/** A question a turn asks, as GET /questions lists it and the `question` event announces it. */
export type PendingQuestion = PendingQuestionInfo

const strings = (o: JsonObject, key: string): ReadonlyArray<string> | undefined => {
  if (!Array.isArray(o[key])) return undefined
  const list = arr(o, key).flatMap((x) => typeof x === "string" ? [x] : [])
  return list.length === arr(o, key).length ? list : undefined
}

/** The fields every pending question has; undefined when one is missing or mistyped. */
export const decodePendingQuestion = (u: JsonObject): PendingQuestion | undefined => {
  const id = str(u, "id")
  const question = str(u, "question")
  const options = strings(u, "options")
  const multiSelect = bool(u, "multiSelect")
  const allowText = bool(u, "allowText")
  const iface = str(u, "interface")
  const channel = str(u, "channel")
  const userId = str(u, "userId")
  const requestedAt = str(u, "requestedAt")
  const expiresAt = str(u, "expiresAt")
  if (
    id === undefined || question === undefined || options === undefined || multiSelect === undefined ||
    allowText === undefined || iface === undefined || channel === undefined || userId === undefined ||
    requestedAt === undefined || expiresAt === undefined
  ) return undefined
  return { id, question, options, multiSelect, allowText, interface: iface, channel, userId, requestedAt, expiresAt }
}

/** GET /questions' answer; undefined when it is not one. Items that do not decode are left out. */
export const decodeQuestions = (u: Json | undefined): ReadonlyArray<PendingQuestion> | undefined => {
  if (!isObject(u) || !Array.isArray(u["questions"])) return undefined
  return arr(u, "questions").flatMap((item) => {
    const pending = isObject(item) ? decodePendingQuestion(item) : undefined
    return pending === undefined ? [] : [pending]
  })
}

const questionOutcomes = ["answered", "timeout", "stopped"] as const
const questionOutcomeOf = (s: string | undefined) => questionOutcomes.find((o) => o === s)

export const decodeEvent = (data: string): ServerEvent | undefined => {
  const u = parseJson(data)
  if (!isObject(u)) return undefined
  const seq = num(u, "seq")
  const type = str(u, "type")
  const at = str(u, "at")
  if (seq === undefined || type === undefined || at === undefined) return undefined
  const turnId = str(u, "turnId")
  const conversationId = str(u, "conversationId")
  // Every event of a turn names its turn and its conversation (src/turn/TurnEvent.ts's TurnIds).
  const ids = turnId === undefined || conversationId === undefined ? undefined : { turnId, conversationId }
  const id = str(u, "id")
  const name = str(u, "name")
  const text = str(u, "text")
  const iface = str(u, "interface")
  const channel = str(u, "channel")
  switch (type) {
    case "incoming": {
      const messageId = str(u, "messageId")
      const userId = str(u, "userId")
      if (
        ids === undefined || text === undefined || iface === undefined || messageId === undefined || channel === undefined ||
        userId === undefined
      ) return undefined
      return { type, seq, at, ...ids, messageId, text, interface: iface, channel, userId }
    }
    case "thinking":
      return ids === undefined ? undefined : { type, seq, at, ...ids, step: num(u, "step") ?? 0 }
    case "text-delta": {
      const delta = str(u, "delta")
      return ids === undefined || delta === undefined ? undefined : { type, seq, at, ...ids, delta }
    }
    case "tool-call":
      if (ids === undefined || id === undefined || name === undefined) return undefined
      return { type, seq, at, ...ids, id, name, params: u["params"] ?? null }
    case "tool-result":
      if (ids === undefined || id === undefined || name === undefined || text === undefined) return undefined
      return { type, seq, at, ...ids, id, name, isError: bool(u, "isError") ?? false, text, durationMs: num(u, "durationMs") ?? 0 }
    case "recall":
      if (ids === undefined) return undefined
      return { type, seq, at, ...ids, query: str(u, "query") ?? "", hits: num(u, "hits") ?? 0, tokens: num(u, "tokens") ?? 0 }
    case "context":
      return ids === undefined || text === undefined ? undefined : { type, seq, at, ...ids, text }
    case "retry":
      return ids === undefined || text === undefined ? undefined : { type, seq, at, ...ids, text, waitMs: num(u, "waitMs") ?? 0 }
    case "finish":
      if (ids === undefined) return undefined
      return {
        type,
        seq,
        at,
        ...ids,
        reply: str(u, "reply") ?? "",
        steps: num(u, "steps") ?? 0,
        usage: usageOf(obj(u, "usage")),
        delivered: bool(u, "delivered") ?? true
      }
    case "error": {
      const failure = decodeFailure(u["failure"])
      if (ids === undefined || failure === undefined) return undefined
      return { type, seq, at, ...ids, message: str(u, "message") ?? failure.message, failure }
    }
    case "outgoing": {
      if (text === undefined || iface === undefined) return undefined
      const file = decodeFile(u["file"])
      return {
        type,
        seq,
        at,
        text,
        interface: iface,
        ...(turnId === undefined ? {} : { turnId }),
        ...(conversationId === undefined ? {} : { conversationId }),
        ...(channel === undefined ? {} : { channel }),
        ...(file === undefined ? {} : { file })
      }
    }
    case "heartbeat": {
      const outcome = outcomeOf(str(u, "outcome"))
      if (outcome === undefined) return undefined
      return { type, seq, at, outcome, reason: str(u, "reason") ?? "", ...(turnId === undefined ? {} : { turnId }) }
    }
    case "approval": {
      const pending = decodePendingApproval(u)
      if (pending === undefined) return undefined
      return { type, seq, at, ...pending }
    }
    case "approval-resolved": {
      const approved = bool(u, "approved")
      const outcome = approvalOutcomeOf(str(u, "outcome"))
      const by = str(u, "by")
      if (id === undefined || approved === undefined || outcome === undefined || by === undefined) return undefined
      return { type, seq, at, id, approved, outcome, by }
    }
    case "limit": {
      const reached = decodeReached(u)
      const message = str(u, "message")
      if (reached === undefined || message === undefined) return undefined
      return { type, seq, at, ...reached, message }
    }
    case "question": {
      const pending = decodePendingQuestion(u)
      if (pending === undefined) return undefined
      return { type, seq, at, ...pending }
    }
    case "question-resolved": {
      const outcome = questionOutcomeOf(str(u, "outcome"))
      const choices = strings(u, "choices")
      const by = str(u, "by")
      if (id === undefined || outcome === undefined || choices === undefined || by === undefined) return undefined
      return { type, seq, at, id, outcome, choices, by, ...(text === undefined ? {} : { text }) }
    }
    case "reset":
      return { type, seq, at, missedFrom: num(u, "missedFrom") ?? 0 }
    default:
      return undefined
  }
}

/** A chat channel's state, as GET /status lists it under `channels`. */
export type ChannelState = StatusResponse["channels"][number]

const channelStates = ["connecting", "connected", "reconnecting", "stopped"] as const

/** The channels of a GET /status answer; a channel that does not decode is left out. */
export const decodeChannels = (status: JsonObject): ReadonlyArray<ChannelState> =>
  arr(status, "channels").flatMap((u) => {
    if (!isObject(u)) return []
    const iface = str(u, "interface")
    const state = channelStates.find((s) => s === str(u, "state"))
    if (iface === undefined || state === undefined) return []
    return [{ interface: iface, state, detail: str(u, "detail") ?? "", since: str(u, "since") ?? "" }]
  })

/** An MCP server's state, as GET /status lists it under `mcpServers` (absent from older agents). */
export interface McpServerView {
  readonly name: string
  readonly state: "connected" | "starting" | "failed" | "disabled" | "idle"
  readonly tools: number
  readonly reason: string | undefined
}

const mcpStates = ["connected", "starting", "failed", "disabled", "idle"] as const

export const decodeMcpServers = (status: JsonObject): ReadonlyArray<McpServerView> =>
  arr(status, "mcpServers").flatMap((u) => {
    if (!isObject(u)) return []
    const name = str(u, "name")
    const state = mcpStates.find((s) => s === str(u, "state"))
    if (name === undefined || state === undefined) return []
    return [{ name, state, tools: num(u, "tools") ?? 0, reason: str(u, "reason") }]
  })

/** The summarizer's state, as GET /status gives it under `summarizer` (absent from older agents). */
export interface SummarizerState {
  readonly state: "ok" | "failing" | "off"
  readonly consecutiveFailures: number
  readonly lastError: string | undefined
  readonly lastSuccessAt: string | undefined
  readonly nextAttemptAt: string | undefined
  readonly lagMessages: number
  readonly fallbackCut: boolean
}

const summarizerStates = ["ok", "failing", "off"] as const

/** Today's spend against the caps, as GET /status carries it (`spend`): the agent's, and the caps reached. */
export interface SpendState {
  readonly day: string
  readonly usdCents: number
  readonly tokens: number
  readonly capCents?: number | undefined
  readonly capTokens?: number | undefined
  /** The caps reached today, as lines. */
  readonly reached: ReadonlyArray<string>
}

export const decodeSpend = (status: JsonObject): SpendState | undefined => {
  const u = status["spend"]
  if (!isObject(u)) return undefined
  const day = str(u, "day")
  const agent = obj(u, "agent")
  const perDay = obj(obj(u, "limits") ?? {}, "perDay")
  if (day === undefined || agent === undefined) return undefined
  const reached = arr(u, "reached").flatMap((item) => {
    const cap = isObject(item) ? decodeReached({ ...item, day }) : undefined
    return cap === undefined ? [] : [`limits.${cap.cap}.${cap.measure} ${cap.limit}${cap.key === "" ? "" : ` for ${cap.key}`} reached (${cap.spent} spent)`]
  })
  return {
    day,
    usdCents: num(agent, "usdCents") ?? 0,
    tokens: (num(agent, "inputTokens") ?? 0) + (num(agent, "outputTokens") ?? 0),
    capCents: perDay === undefined ? undefined : num(perDay, "usdCents"),
    capTokens: perDay === undefined ? undefined : num(perDay, "tokens"),
    reached
  }
}

export const decodeSummarizer = (status: JsonObject): SummarizerState | undefined => {
  const u = status["summarizer"]
  if (!isObject(u)) return undefined
  const state = summarizerStates.find((s) => s === str(u, "state"))
  const consecutiveFailures = num(u, "consecutiveFailures")
  const lagMessages = num(u, "lagMessages")
  const fallbackCut = bool(u, "fallbackCut")
  if (state === undefined || consecutiveFailures === undefined || lagMessages === undefined || fallbackCut === undefined) return undefined
  return {
    state,
    consecutiveFailures,
    lastError: str(u, "lastError"),
    lastSuccessAt: str(u, "lastSuccessAt"),
    nextAttemptAt: str(u, "nextAttemptAt"),
    lagMessages,
    fallbackCut
  }
}

/** The failure's tag (ProviderFailed, WatchdogFired, …) an error event carries. */
export const failureTag = (failure: TurnFailure): string => failure._tag

/** One segment of GET /segments or /context/segments; undefined when a field is missing or mistyped. */
export const decodeSegment = (u: JsonObject): SegmentInfo | undefined => {
  const id = num(u, "id")
  const level = num(u, "level")
  const start = num(u, "start")
  const end = num(u, "end")
  const tokens = num(u, "tokens")
  const summaryTokens = num(u, "summaryTokens")
  const summary = u["summary"]
  const firstAt = str(u, "firstAt")
  const lastAt = str(u, "lastAt")
  const parentId = u["parentId"]
  const inContext = bool(u, "inContext")
  if (
    id === undefined || level === undefined || start === undefined || end === undefined || tokens === undefined ||
    summaryTokens === undefined || firstAt === undefined || lastAt === undefined || inContext === undefined ||
    !(summary === null || typeof summary === "string") ||
    !(parentId === null || (typeof parentId === "number" && Number.isFinite(parentId)))
  ) return undefined
  return { id, level, start, end, tokens, summaryTokens, summary, firstAt, lastAt, parentId, inContext }
}

const segmentsOf = (u: JsonObject, key: string): ReadonlyArray<SegmentInfo> =>
  arr(u, key).flatMap((item) => {
    const segment = isObject(item) ? decodeSegment(item) : undefined
    return segment === undefined ? [] : [segment]
  })

/** GET /segments' answer; undefined when it is not one. Segments that do not decode are left out. */
export const decodeSegments = (u: Json | undefined): SegmentsResponse | undefined => {
  if (!isObject(u) || !Array.isArray(u["segments"])) return undefined
  const sessionId = str(u, "sessionId")
  const messages = num(u, "messages")
  const cut = num(u, "cut")
  if (sessionId === undefined || messages === undefined || cut === undefined) return undefined
  return { sessionId, messages, cut, segments: segmentsOf(u, "segments") }
}

/** GET /context/segments' answer; undefined when it is not one. Segments that do not decode are left out. */
/** GET /context/segments as the UI reads it: `request` is absent from an older server. */
export type RequestFigures = Omit<ContextSegmentsResponse, "request" | "toolsCost"> & {
  readonly request: ContextSegmentsResponse["request"] | undefined
  /** Absent from an older server. */
  readonly toolsCost: ContextSegmentsResponse["toolsCost"] | undefined
}

const toolsCostOf = (u: Json | undefined): RequestFigures["toolsCost"] => {
  if (!isObject(u)) return undefined
  const builtin = num(u, "builtin")
  const mcp = num(u, "mcp")
  const lazyTools = num(u, "lazyTools")
  const saved = num(u, "saved")
  return builtin === undefined || mcp === undefined || lazyTools === undefined || saved === undefined
    ? undefined
    : { builtin, mcp, lazyTools, saved }
}

export const decodeContextSegments = (u: Json | undefined): RequestFigures | undefined => {
  if (!isObject(u) || !Array.isArray(u["injected"])) return undefined
  const sessionId = str(u, "sessionId")
  const messages = num(u, "messages")
  const cut = num(u, "cut")
  const budget = obj(u, "budget")
  const tokens = obj(u, "tokens")
  if (sessionId === undefined || messages === undefined || cut === undefined || budget === undefined || tokens === undefined) {
    return undefined
  }
  const maxContextTokens = num(budget, "maxContextTokens")
  const summaryBudget = num(budget, "summary")
  const rawBudget = num(budget, "raw")
  const system = num(tokens, "system")
  const tools = num(tokens, "tools")
  const summary = num(tokens, "summary")
  const raw = num(tokens, "raw")
  const total = num(tokens, "total")
  if (
    maxContextTokens === undefined || summaryBudget === undefined || rawBudget === undefined || system === undefined ||
    tools === undefined || summary === undefined || raw === undefined || total === undefined
  ) return undefined
  // An older server sends no toolsCost; a server that sends one the UI cannot read sends figures it cannot trust.
  const toolsCost = toolsCostOf(u["toolsCost"])
  if (u["toolsCost"] !== undefined && toolsCost === undefined) return undefined
  const request = str(u, "request")
  return {
    // An older server does not say which request its figures are of.
    request: request === "next" || request === "last" ? request : undefined,
    sessionId,
    messages,
    cut,
    budget: { maxContextTokens, summary: summaryBudget, raw: rawBudget },
    tokens: { system, tools, summary, raw, total },
    toolsCost,
    injected: segmentsOf(u, "injected"),
    // What the figures leave out, in words (an older server does not say).
    leftOut: Array.isArray(u["leftOut"]) ? u["leftOut"].filter((item): item is string => typeof item === "string") : []
  }
}
