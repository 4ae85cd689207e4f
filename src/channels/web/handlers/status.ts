import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { AgentConfig } from "../../../config/AgentConfig.js"
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
import { databaseBytes } from "../../../storage/databaseBytes.js"
import { isoAt } from "../../../session/envelope.js"
import { usageTotals } from "../../../session/usageTotals.js"
import { Channels } from "../../../tools/Channels.js"
import { JobStore } from "../../../tools/JobStore.js"
import { runningJobsOf, runningSubAgentsOf } from "../../../tools/runningWork.js"
import { SubAgentStore } from "../../../tools/subagents/SubAgentStore.js"
import { notFound, serverError } from "../ApiError.js"
import { EventHub } from "../EventHub.js"
import { KernApi } from "../KernApi.js"
import { ServerInfo } from "../ServerInfo.js"

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
        channels: (yield* channels.statuses).map((channel) => ({
          interface: channel.interface,
          state: channel.state,
          detail: channel.detail,
          since: isoAt(channel.sinceMs)
        })),
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
    return handlers.handle("status", () => status).handle("usage", () => usage)
      .handle("mcpTools", ({ urlParams }) => (urlParams.server === undefined ? connectedTools : mcpTools(urlParams.server)))
  }))
