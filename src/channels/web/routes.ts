import { FileSystem, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema, Stream } from "effect"
import { parseJsonWith } from "../../config/json.js"
import { AgentRuntime } from "../../runtime/AgentRuntime.js"
import { isoAt } from "../../session/envelope.js"
import { type Approvals, localOperator } from "../../runtime/Approvals.js"
import { approvalInfo } from "../approvalInfo.js"
import type { Channels } from "../../tools/Channels.js"
import { HeartbeatLog, heartbeatStatus } from "../../runtime/HeartbeatLog.js"
import { heartbeatInterface } from "../../turn/MessageQueue.js"
import { AgentConfig } from "../../config/AgentConfig.js"
import { providerProblems } from "../../config/providers.js"
import { usageTotals } from "../../session/usageTotals.js"
import { ContextWindow } from "../../context/ContextWindow.js"
import { nextRequest } from "../../context/nextRequest.js"
import type { Segment } from "../../context/Segment.js"
import { uncachedFiles } from "../../memory/fileCache.js"
import type { ToolRegistry } from "../../kernel/ToolRegistry.js"
import { NotesSummary } from "../../memory/NotesSummary.js"
import type { Tokenizer } from "../../model/tokenizer.js"
import { costCapProblem } from "../../model/pricing.js"
import { type Recall, type RecallError } from "../../recall/Recall.js"
import { RecallStats, SearchRequest, SearchResult } from "../../recall/schema.js"
import { SessionStore } from "../../session/SessionStore.js"
import * as Api from "./api.js"
import { ApiError, badRequest, invalid, notFound } from "./ApiError.js"
import { EventHub } from "./EventHub.js"
import { databaseBytes, historyPage, intParam, sessionActivity, sessionFile, systemSections } from "./inspect.js"
import { parseLastEventId, sseFrames } from "./sse.js"

/** What the routes answer from: the running agent's services, captured once when the server starts. */
export interface RouteServices {
  readonly runtime: AgentRuntime
  readonly hub: EventHub
  readonly config: AgentConfig["Type"]
  readonly fs: FileSystem.FileSystem
  readonly sql: SqlClient.SqlClient
  readonly sessions: SessionStore
  readonly summaries: NotesSummary["Type"]
  readonly heartbeatLog: HeartbeatLog
  readonly recall: Recall
  readonly approvals: Approvals["Type"]
  readonly channels: Channels["Type"]
  /** The registered tools: the operator's turns are offered all of them. */
  readonly registry: ToolRegistry["Type"]
  readonly tokenizer: Tokenizer
  readonly context: ContextWindow
  readonly server: { readonly host: string; readonly port: number; readonly command: string; readonly startedAtMs: number }
}

const json = <A, I>(schema: Schema.Schema<A, I>, status = 200) => (body: A) =>
  HttpServerResponse.schemaJson(schema)(body, { status }).pipe(
    Effect.mapError((error) => new ApiError({ status: 500, error: `could not encode the answer: ${String(error)}` }))
  )

const query = Effect.map(HttpServerRequest.HttpServerRequest, (request) => new URL(request.url, "http://kern").searchParams)

const param = (params: URLSearchParams, name: string) => params.get(name) ?? undefined

const storage = (error: { readonly message: string }) => new ApiError({ status: 500, error: error.message })

/** Past this many times the cap a body is not even drained: the connection is cut. */
const drainFactor = 8

/**
 * The body as text, refused with 413 past `limit` bytes, counted while reading (a body without Content-Length
 * included). Bytes past the cap are read and dropped so the client gets its 413 (stopping a request's stream
 * destroys its socket); past `drainFactor` times the cap the connection is cut instead.
 */
const readBody = <A, I>(schema: Schema.Schema<A, I>, limit: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const tooLarge = new ApiError({ status: 413, error: `the body is larger than ${limit} bytes` })
    const { chunks, size } = yield* request.stream.pipe(
      Stream.mapError((error) => badRequest("body", `body: ${error.message}`)),
      Stream.runFoldEffect({ chunks: [] as Array<Uint8Array>, size: 0 }, (acc, chunk) => {
        const size = acc.size + chunk.length
        if (size > limit * drainFactor) return Effect.fail(tooLarge)
        if (size <= limit) acc.chunks.push(chunk)
        return Effect.succeed({ chunks: acc.chunks, size })
      })
    )
    if (size > limit) return yield* tooLarge
    const text = Buffer.concat(chunks).toString("utf8")
    return yield* Schema.decode(parseJsonWith(schema))(text).pipe(Effect.mapError(invalid("body")))
  })

export const makeRouter = (services: RouteServices, options: { readonly bodyLimitBytes: number }) => {
  const { runtime, hub, config: loaded, fs, sql, sessions, summaries, heartbeatLog, recall, approvals, channels, registry, context, server } = services
  const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(
      Effect.provideService(AgentConfig, loaded),
      Effect.provideService(FileSystem.FileSystem, fs),
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(NotesSummary, summaries)
    )
  const { config, paths } = loaded

  const health = json(Api.HealthResponse)({
    ok: true,
    name: config.name,
    pid: process.pid,
    startedAt: isoAt(server.startedAtMs)
  })

  const events = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* query
    // EventSource sends Last-Event-ID itself when it reconnects; a page that reloads passes it in the query.
    const lastId = Option.orElse(parseLastEventId(request.headers["last-event-id"]), () => parseLastEventId(param(params, "lastEventId")))
    const encoder = new TextEncoder()
    const body = Stream.unwrapScoped(sseFrames(hub, lastId)).pipe(Stream.map((frame) => encoder.encode(frame)))
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })

  const message = Effect.gen(function*() {
    const body = yield* readBody(Api.MessageRequest, options.bodyLimitBytes)
    if (body.text.trim() === "") return yield* badRequest("text", "text: must not be empty")
    const iface = body.interface ?? "web"
    if (iface.trim() === "" || iface === heartbeatInterface) return yield* badRequest("interface", `interface: "${iface}" is not a channel a message can come from`)
    const channel = body.channel ?? "web"
    if (channel.trim() === "") return yield* badRequest("channel", "channel: must not be empty")
    const queued = yield* runtime.submit({ interface: iface, channel, userId: "operator", text: body.text }).pipe(
      // 507 Insufficient Storage when kern.db's disk is full: the client is told plainly, and may send it again later.
      Effect.mapError((error) => new ApiError({ status: error.reason === "disk-full" ? 507 : 503, error: `not accepted: ${error.message}` }))
    )
    return yield* json(Api.MessageAccepted, 202)({ turnId: queued.turnId })
  })

  const status = Effect.gen(function*() {
    const live = yield* runtime.status
    const costCap = costCapProblem(config)
    const problems = [...loaded.warnings, ...providerProblems(config, loaded.env), ...(costCap === undefined ? [] : [costCap])]
    const dbBytes = yield* provide(databaseBytes(paths.dbFile)).pipe(Effect.mapError(storage))
    const usage = yield* provide(usageTotals).pipe(Effect.mapError(storage))
    const heartbeat = yield* heartbeatLog.state.pipe(Effect.mapError(storage))
    return yield* json(Api.StatusResponse)({
      dir: paths.dir,
      name: config.name,
      provider: config.provider,
      model: config.model ?? null,
      problems,
      dbBytes,
      usage,
      heartbeat: heartbeatStatus(config, heartbeat),
      runtime: {
        pid: process.pid,
        command: server.command,
        since: isoAt(server.startedAtMs),
        uptimeMs: live.uptimeMs,
        host: server.host,
        port: server.port,
        sessionId: live.sessionId,
        messages: live.messages,
        queued: live.queued,
        inbox: live.inbox,
        turns: live.turns,
        listeners: yield* hub.listeners,
        approvals: (yield* approvals.pending).length
      },
      channels: (yield* channels.statuses).map((channel) => ({
        interface: channel.interface,
        state: channel.state,
        detail: channel.detail,
        since: isoAt(channel.sinceMs)
      })),
      summarizer: yield* context.summaryStatus(live.sessionId, live.messages)
    })
  })

  const approvalList = Effect.flatMap(approvals.pending, (pending) =>
    json(Api.ApprovalsResponse)({ approvals: pending.map(approvalInfo) }))

  // The HTTP API's token is the operator's: whoever holds it answers as the operator.
  const decideApproval = Effect.gen(function*() {
    const { id } = yield* HttpRouter.params
    if (id === undefined || id === "") return yield* badRequest("id", "id: missing")
    const body = yield* readBody(Api.ApprovalDecisionRequest, options.bodyLimitBytes)
    const resolution = yield* approvals.decide(id, body.approved, localOperator("http")).pipe(
      Effect.mapError((error) => new ApiError({ status: error.reason === "unknown_id" ? 404 : 403, error: error.message }))
    )
    return yield* json(Api.ApprovalDecisionResponse)({
      id: resolution.id,
      approved: resolution.approved,
      outcome: resolution.outcome,
      by: resolution.by
    })
  })

  const history = Effect.gen(function*() {
    const params = yield* query
    const limit = yield* intParam(param(params, "limit"), "limit", 1, 500, 50)
    const beforeText = param(params, "before")
    const before = beforeText === undefined ? undefined : yield* intParam(beforeText, "before", 0, Number.MAX_SAFE_INTEGER, 0)
    const id = param(params, "session") ?? (yield* runtime.currentSession).id
    const path = yield* sessionFile(paths.sessionsDir, id, "session")
    return yield* json(Api.HistoryResponse)(yield* provide(historyPage(path, id, limit, before)).pipe(
      Effect.catchTag("SystemError", "BadArgument", storage)
    ))
  })

  const sessionList = Effect.gen(function*() {
    const current = (yield* runtime.currentSession).id
    const all = yield* sessions.list.pipe(Effect.mapError(storage))
    return yield* json(Api.SessionsResponse)({
      currentSessionId: current,
      sessions: all.map((s) => ({ id: s.id, createdAt: s.createdAt, messages: s.messages, bytes: s.bytes, modifiedAt: s.updatedAt, current: s.id === current }))
    })
  })

  const newSession = runtime.newSession.pipe(
    Effect.mapError(storage),
    Effect.flatMap((sessionId) => json(Api.NewSessionResponse, 201)({ sessionId }))
  )

  const activity = Effect.gen(function*() {
    const { id } = yield* HttpRouter.params
    if (id === undefined) return yield* badRequest("id", "id: missing")
    const path = yield* sessionFile(paths.sessionsDir, id)
    return yield* json(Api.ActivityResponse)(yield* provide(sessionActivity(path, id)).pipe(
      Effect.catchTag("SystemError", "BadArgument", storage)
    ))
  })

  /**
   * The request the operator's next turn would send in the current session (before its own message), planned and
   * built as the turn builds it (ContextWindow.preview), memory files read afresh.
   */
  const next = Effect.gen(function*() {
    const session = yield* runtime.currentSession
    return yield* provide(nextRequest({
      sessionId: session.id,
      history: session.history,
      tools: yield* registry.listTools,
      files: yield* uncachedFiles,
      modelId: config.model ?? ""
    })).pipe(Effect.provideService(ContextWindow, context))
  })

  const contextSystem = Effect.gen(function*() {
    const request = yield* next
    return yield* json(Api.SystemPromptResponse)(systemSections(request, context.count))
  })

  const currentBreakdown = Effect.map(next, (request) => request.breakdown)

  const segmentInfo = (injected: ReadonlySet<number>) => (segment: Segment): Api.SegmentInfo => ({
    id: segment.id,
    level: segment.level,
    start: segment.start,
    end: segment.end,
    tokens: segment.tokens,
    summaryTokens: segment.summaryTokens,
    summary: segment.summary,
    firstAt: segment.firstAt,
    lastAt: segment.lastAt,
    parentId: segment.parentId,
    inContext: injected.has(segment.id)
  })

  const contextSegments = Effect.gen(function*() {
    const breakdown = yield* currentBreakdown
    const injected = new Set(breakdown.injected.map((segment) => segment.id))
    return yield* json(Api.ContextSegmentsResponse)({
      request: "next",
      sessionId: breakdown.sessionId,
      messages: breakdown.messages,
      cut: breakdown.cut,
      budget: { maxContextTokens: breakdown.budget.maxContextTokens, summary: breakdown.budget.summary, raw: breakdown.budget.raw },
      tokens: breakdown.tokens,
      injected: breakdown.injected.map(segmentInfo(injected))
    })
  })

  /** A session's segment tree (the current one by default), each segment marked when its summary is in the context. */
  const segmentTree = Effect.gen(function*() {
    const params = yield* query
    const current = yield* runtime.currentSession
    const id = param(params, "session") ?? current.id
    yield* sessionFile(paths.sessionsDir, id, "session")
    const all = yield* sessions.list.pipe(Effect.mapError(storage))
    const listed = all.find((s) => s.id === id)
    if (listed === undefined) return yield* notFound(`no session ${id}`)
    const isCurrent = id === current.id
    const breakdown = isCurrent ? Option.some(yield* currentBreakdown) : Option.none()
    const injected = new Set(Option.match(breakdown, { onNone: () => [], onSome: (b) => b.injected.map((s) => s.id) }))
    const segments = yield* context.segments(id)
    return yield* json(Api.SegmentsResponse)({
      sessionId: id,
      messages: isCurrent ? yield* current.history.size : listed.messages,
      cut: Option.isSome(breakdown) ? breakdown.value.cut : yield* context.storedCut(id),
      segments: segments.map(segmentInfo(injected))
    })
  })

  const usage = Effect.flatMap(provide(usageTotals).pipe(Effect.mapError(storage)), json(Api.UsageResponse))

  // Recall runs in this process (the one holding the folder), so its own figures say whether a backfill runs.
  const recallOff = new ApiError({ status: 409, error: "recall is off (\"recall\": false in .kern/config.json)" })
  const recallFailed = (error: RecallError) =>
    new ApiError({ status: error.reason === "not_found" ? 404 : 500, error: error.message })

  const recallStats = recall.enabled
    ? Effect.flatMap(recall.stats.pipe(Effect.mapError(recallFailed)), json(RecallStats))
    : Effect.fail(recallOff)

  const recallSearch = Effect.gen(function*() {
    if (!recall.enabled) return yield* recallOff
    const params = yield* query
    const text = (param(params, "q") ?? "").trim()
    if (text === "") return yield* badRequest("q", "q: missing (the words to search for)")
    const limit = yield* intParam(param(params, "limit"), "limit", 1, 50, 5)
    const after = param(params, "after")
    const before = param(params, "before")
    const request = yield* Schema.decodeUnknown(SearchRequest)({
      query: text,
      limit,
      ...(after === undefined ? {} : { after }),
      ...(before === undefined ? {} : { before })
    }).pipe(Effect.mapError(invalid("q")))
    return yield* json(SearchResult)(yield* recall.search(request).pipe(Effect.mapError(recallFailed)))
  })

  const summaryBody = (summary: Option.Option<{ readonly text: string; readonly sources: ReadonlyArray<string>; readonly fresh: boolean }>) =>
    json(Api.NotesSummaryResponse)({ summary: Option.getOrNull(summary) })

  return {
    /** Anyone may ask: the health check holds no data. */
    open: HttpRouter.empty.pipe(HttpRouter.get("/health", health)),
    /** Every one of these passes the guard (WebServer applies it to the whole router). */
    guarded: HttpRouter.empty.pipe(
      HttpRouter.get("/events", events),
      HttpRouter.post("/message", message),
      HttpRouter.get("/status", status),
      HttpRouter.get("/history", history),
      HttpRouter.get("/sessions", sessionList),
      HttpRouter.post("/sessions", newSession),
      HttpRouter.get("/sessions/:id/activity", activity),
      HttpRouter.get("/context/system", contextSystem),
      HttpRouter.get("/context/segments", contextSegments),
      HttpRouter.get("/segments", segmentTree),
      HttpRouter.get("/recall/stats", recallStats),
      HttpRouter.get("/recall/search", recallSearch),
      HttpRouter.get("/usage", usage),
      HttpRouter.get("/notes/summary", Effect.flatMap(summaries.current, summaryBody)),
      HttpRouter.post("/notes/summary", Effect.flatMap(summaries.regenerate, summaryBody)),
      HttpRouter.get("/approvals", approvalList),
      HttpRouter.post("/approvals/:id", decideApproval)
    )
  }
}
