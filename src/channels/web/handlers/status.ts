import { FileSystem, HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Either, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { AgentConfig, type LoadedConfig, makeConfigLoader } from "../../../config/AgentConfig.js"
import { databaseTarget, type DatabaseTarget, sameTarget } from "../../../config/database.js"
import { ProcessEnv } from "../../../config/ProcessEnv.js"
import { providerProblems } from "../../../config/providers.js"
import { ContextWindow } from "../../../context/ContextWindow.js"
import { costCapProblem } from "../../../model/pricing.js"
import { SpendGuard } from "../../../model/SpendGuard.js"
import { Approvals } from "../../../runtime/Approvals.js"
import { AgentRuntime } from "../../../runtime/AgentRuntime.js"
import { HeartbeatLog, heartbeatStatus } from "../../../runtime/HeartbeatLog.js"
import { McpServers } from "../../../mcp/McpServers.js"
import { mcpToolRows } from "../../../mcp/McpToolRow.js"
import { ToolRegistry } from "../../../kernel/ToolRegistry.js"
import { changeCounter } from "../../../storage/changeCounter.js"
import { databaseBytes } from "../../../storage/databaseBytes.js"
import { isoAt } from "../../../session/envelope.js"
import { usageTotals } from "../../../session/usageTotals.js"
import { Channels } from "../../../tools/Channels.js"
import { JobStore } from "../../../tools/JobStore.js"
import { runningJobsOf, runningSubAgentsOf } from "../../../tools/runningWork.js"
import { ScheduleStore } from "../../../tools/schedules/ScheduleStore.js"
import { SubAgentStore } from "../../../tools/subagents/SubAgentStore.js"
import { PairingStore } from "../../../users/PairingStore.js"
import type { LockHolder } from "../../../storage/LockFile.js"
import { approvalInfo } from "../../approvalInfo.js"
import { ApprovalsResponse, StatusResponse, type StatusReportRequest } from "../api.js"
import { NotFound, notFound, serverError } from "../ApiError.js"
import { EventHub } from "../EventHub.js"
import { KernApi } from "../KernApi.js"
import { ServerInfo } from "../ServerInfo.js"
import { type LiveStatus, type LiveView, statusOutput } from "../statusReport.js"
import type { KeptReads } from "../statusStored.js"

/** A value as a client of the HTTP API has it: encoded by `schema`, then decoded. */
const asSent = <A, I>(schema: Schema.Schema<A, I>) => (value: A) =>
  Effect.flatMap(Schema.encode(schema)(value), Schema.decodeUnknown(schema))

/** The part of GET /status the report shows of the running agent (statusReport.ts LiveView), as sent. */
const LiveViewResponse = Schema.Struct({
  ...StatusResponse.pick("channels", "summarizer", "mcpServers").fields,
  runtime: StatusResponse.fields.runtime.pick("uptimeMs", "approvals")
})

/** What `kern status --json` shows, plus the running server and runtime; usage totals. */
export const layer = HttpApiBuilder.group(KernApi, "status", (handlers) =>
  Effect.gen(function*() {
    const loaded = yield* AgentConfig
    const runtime = yield* AgentRuntime
    const hub = yield* EventHub
    const heartbeatLog = yield* HeartbeatLog
    const approvals = yield* Approvals
    const channels = yield* Channels
    const context = yield* ContextWindow
    const server = yield* ServerInfo
    const mcpServers = yield* McpServers
    const guard = yield* SpendGuard
    const jobStore = yield* JobStore
    const subagentStore = yield* SubAgentStore
    const { config, paths } = loaded
    const usage = usageTotals.pipe(Effect.mapError(serverError))

    const channelsNow = Effect.map(channels.statuses, (statuses) =>
      statuses.map((channel) => ({
        interface: channel.interface,
        state: channel.state,
        detail: channel.detail,
        since: isoAt(channel.sinceMs)
      })))

    const status = Effect.gen(function*() {
      const live = yield* runtime.status
      const costCap = costCapProblem(config)
      return {
        dir: paths.dir,
        name: config.name,
        provider: config.provider,
        model: config.model ?? null,
        problems: [...loaded.warnings, ...providerProblems(config, loaded.env), ...(costCap === undefined ? [] : [costCap])],
        dbBytes: yield* databaseBytes(paths.dbFile).pipe(Effect.mapError(serverError)),
        usage: yield* usage,
        heartbeat: heartbeatStatus(config, yield* heartbeatLog.state.pipe(Effect.mapError(serverError))),
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
        channels: yield* channelsNow,
        summarizer: yield* context.summaryStatus(live.sessionId, live.messages),
        mcpServers: yield* mcpServers.states,
        spend: yield* guard.today.pipe(Effect.mapError(serverError)),
        jobs: runningJobsOf(yield* jobStore.running.pipe(Effect.mapError(serverError)), yield* Clock.currentTimeMillis),
        subagents: runningSubAgentsOf(yield* subagentStore.running.pipe(Effect.mapError(serverError)), yield* Clock.currentTimeMillis),
        media: { maxFileBytes: config.media.maxFileBytes, maxTurnBytes: config.media.maxTurnBytes }
      }
    })

    const registry = yield* ToolRegistry
    const mcpTools = (server: string) =>
      Effect.zipRight(mcpServers.ensure(server), mcpServers.tools(server)).pipe(
        Effect.map((listed) => mcpToolRows(server, config.mcpServers[server], listed, registry)),
        Effect.mapError((failure) => notFound(failure.message))
      )
    const connectedTools = Effect.flatMap(mcpServers.states, (states) =>
      Effect.map(
        Effect.forEach(states.filter((state) => state.state === "connected"), (state) =>
          // A server that closed since its state was read is left out, and said in the log.
          mcpTools(state.name).pipe(Effect.catchAll((failure) => Effect.as(Effect.logWarning(`kern: ${failure.error}`), [])))),
        (rows) => rows.flat()
      ))
    // POST /status/report: the command line's report, its live part from this process rather than over HTTP. Where
    // the command line would not find this agent as the folder's (another holder of the lock, a lock without an
    // address, a hosted folder), it is answered 404 and the command line makes the report itself.
    const fs = yield* FileSystem.FileSystem
    const notMine = (why: string) => Effect.fail(notFound(`kern status makes this report itself: ${why}`))
    // What the report shows of GET /status, read as GET /status reads it, and nothing else: kern.db's figures there
    // (usage, heartbeat, spend, jobs) the report reads from kern.db itself.
    const liveView = (pending: ReadonlyArray<unknown>) =>
      Effect.gen(function*() {
        const session = yield* runtime.currentSession
        const messages = yield* session.history.size
        return {
          runtime: { uptimeMs: (yield* Clock.currentTimeMillis) - runtime.startedAtMs, approvals: pending.length },
          channels: yield* channelsNow,
          summarizer: yield* context.summaryStatus(session.id, messages),
          mcpServers: yield* mcpServers.states
        }
      })
    const live = (fresh: LoadedConfig, holder: LockHolder) =>
      Effect.gen(function*() {
        if (holder.pid !== process.pid || holder.address === undefined) return yield* notMine("another process holds the folder")
        // As the command line's client finds the agent: with a token, answering /health as the folder's agent.
        const token = fresh.env.KERN_AUTH_TOKEN
        if (token === undefined || token === "" || fresh.config.name !== config.name) {
          return { server: Option.none(), status: Option.none(), waiting: [] } satisfies LiveStatus
        }
        const pending = yield* approvals.pending
        const now: Option.Option<LiveView> = yield* Effect.option(Effect.flatMap(liveView(pending), asSent(LiveViewResponse)))
        const waiting = Option.isSome(now) && now.value.runtime.approvals > 0
          ? Option.match(yield* Effect.option(asSent(ApprovalsResponse)({ approvals: pending.map(approvalInfo) })), {
            onNone: () => [],
            onSome: (answer) =>
              answer.approvals.map((pending) => ({ id: pending.id, toolId: pending.toolId, userId: pending.userId, expiresAt: pending.expiresAt }))
          })
          : []
        return { server: Option.some({ url: holder.address, pid: process.pid }), status: now, waiting } satisfies LiveStatus
      })
    // kern.db as this agent holds it: the report reads it over the agent's own connection (its statements prepared)
    // and stores rather than opening it and making them again for every ask, while the folder's config still names
    // the same database.
    const held = databaseTarget(config, loaded.env, paths.dbFile)
    const heldStores = Context.make(SqlClient.SqlClient, yield* SqlClient.SqlClient).pipe(
      Context.add(HeartbeatLog, heartbeatLog),
      Context.add(ScheduleStore, yield* ScheduleStore),
      Context.add(JobStore, jobStore),
      Context.add(SubAgentStore, subagentStore),
      Context.add(PairingStore, yield* PairingStore)
    )
    const stores = (target: DatabaseTarget) => Either.isRight(held) && sameTarget(held.right, target) ? heldStores : undefined
    // Its reads of kern.db's rows are kept while kern.db's change counter stays (none for a PostgreSQL database).
    const counter = Either.isRight(held) && held.right._tag === "sqlite" ? yield* changeCounter(held.right.file) : Option.none()
    const kept: KeptReads | undefined = Option.isSome(counter) ? { counter: counter.value, kept: new Map() } : undefined
    // The folder's config is read at every ask, and decoded again only when its text changed.
    const loadConfig = yield* makeConfigLoader
    const report = (request: StatusReportRequest) =>
      NodePath.resolve(request.cwd, request.dir) !== paths.dir
        ? notMine(`${request.dir} is not this agent's folder`)
        : statusOutput({ dir: request.dir, cwd: request.cwd }, request.json, {
          hosted: () => notMine("the folder is hosted by a kern serve"),
          live,
          stores,
          kept,
          loadConfig
        }).pipe(
          Effect.provideService(ProcessEnv, request.env),
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.mapError((error) => error instanceof NotFound ? error : serverError(error))
        )

    return handlers.handle("status", () => status).handle("usage", () => usage)
      .handle("report", ({ payload }) => report(payload))
      .handle("mcpTools", ({ urlParams }) => (urlParams.server === undefined ? connectedTools : mcpTools(urlParams.server)))
  }))
