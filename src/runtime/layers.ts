import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Duration, Effect, Layer, Option } from "effect"
import * as AgentLive from "./AgentLive.js"
import type { Conversations } from "./Conversations.js"
import * as ContextCatchUp from "./ContextCatchUp.js"
import * as AgentLock from "./AgentLock.js"
import { AgentRuntime } from "./AgentRuntime.js"
import * as AgentRuntimeLive from "./AgentRuntime.js"
import * as FollowupsLive from "./followupsLive.js"
import * as MediaStore from "../media/MediaStore.js"
import * as SubagentsLive from "./subagentsLive.js"
import * as Telemetry from "./telemetry.js"
import * as Spawn from "../tools/subagents/spawn.js"
import * as JobsLive from "./jobsLive.js"
import * as Jobs from "../tools/Jobs.js"
import * as SubAgents from "../tools/subagents/SubAgents.js"
import * as JobsTool from "../tools/jobsTool.js"
import { JobStore } from "../tools/JobStore.js"
import * as ScheduleLoop from "./ScheduleLoop.js"
import * as InboxSql from "./Inbox.js"
import * as TurnLoop from "./TurnLoop.js"
import { PairingStore } from "../users/PairingStore.js"
import * as Channels from "../tools/Channels.js"
import * as ApprovalGate from "../kernel/ApprovalGate.js"
import * as Approvals from "./Approvals.js"
import * as AgentConfig from "../config/AgentConfig.js"
import type { AgentCapabilities } from "../kernel/contracts.js"
import * as Kernel from "../kernel/Kernel.js"
import * as Provider from "../model/Provider.js"
import * as ModelHttpClient from "../model/ModelHttpClient.js"
import * as RedactingHttpClient from "../model/RedactingHttpClient.js"
import * as Transcription from "../model/Transcription.js"
import * as SpendGuard from "../model/SpendGuard.js"
import { ContextWindow } from "../context/ContextWindow.js"
import * as SegmentStoreSql from "../context/SegmentStoreSql.js"
import * as Summarizer from "../context/Summarizer.js"
import * as MemoryCommits from "../memory/MemoryCommits.js"
import * as NotesSummary from "../memory/NotesSummary.js"
import * as RecallLayers from "../recall/layers.js"
import * as RecallWorker from "./RecallWorker.js"
import * as AgentDatabase from "./agentDatabase.js"
import * as Builtins from "../tools/builtins.js"
import * as McpServers from "../mcp/McpServers.js"
import * as ReadSkill from "../skills/readSkill.js"
import * as RuntimeInfo from "../tools/RuntimeInfo.js"
import * as ToolServices from "../tools/ToolServices.js"
import { ScheduleStore } from "../tools/schedules/ScheduleStore.js"
import { NotAnAgentFolder } from "../config/errors.js"

/** Where a layer's notices go (config warnings, the lock's waiting line): stderr in the CLI, a log in a library. */
export type Report = (line: string) => Effect.Effect<void>

export const logReport: Report = (line) => Effect.logWarning(line)

/** The agent folder's config, reporting its warnings once; refuses a folder that `kern init` has not set up. */
export const configLayer = (dir: string, report: Report = logReport) =>
  Layer.tap(AgentConfig.layer(dir), (context) => checkedConfig(dir, Context.get(context, AgentConfig.AgentConfig), report))

/** An already-loaded config, checked the same way. */
export const loadedConfigLayer = (loaded: AgentConfig.LoadedConfig, report: Report = logReport) =>
  Layer.effect(AgentConfig.AgentConfig, Effect.as(checkedConfig(loaded.paths.dir, loaded, report), loaded))

/** `dir` as the user named it, for the message. */
const checkedConfig = (dir: string, loaded: AgentConfig.LoadedConfig, report: Report) =>
  Effect.gen(function*() {
    if (!loaded.fileExists) return yield* new NotAnAgentFolder({ dir })
    for (const warning of loaded.warnings) yield* report(`warning: ${warning}`)
  })

/**
 * The gate the config's approvalMode asks for, with the agent's Approvals (and users) beside it: `ask` sends
 * DESTRUCTIVE calls to a person; with `auto` and `deny` Approvals stays empty but there, for `kern approve` to ask.
 */
const approvalGate = (config: AgentConfig.LoadedConfig["config"]) =>
  (config.approvalMode === "ask" ? Approvals.askGate : ApprovalGate.fromApprovalMode(config.approvalMode)).pipe(
    Layer.provideMerge(Approvals.layer),
    Layer.provideMerge(PairingStore.Default)
  )

/** How a turn runner holds the folder: what it is called and how long it waits for another runtime to finish. */
export interface HoldFolder {
  readonly command: string
  readonly waitSeconds: number
  /** Where the lock's waiting line and the config's warnings go; logged as warnings by default. */
  readonly report?: Report | undefined
  /** Where the runtime's HTTP API listens, recorded in the lock for clients to find (kern run, kern start). */
  readonly address?: string | undefined
  /** For a command that must not wait for a running agent: the advice it is refused with (AgentLock.HoldOptions). */
  readonly whileAgentRuns?: string | undefined
  /** What an embedded agent declares it may use (Agent.layer's `capabilities`): narrows the config's tool policy. */
  readonly capabilities?: AgentCapabilities | undefined
  /** A `kern serve` among several runners: its place in the cluster (AgentLock.HoldOptions.cluster). */
  readonly cluster?: AgentLock.HoldOptions["cluster"]
}

/** The agent lock held for the layer's lifetime, once the config says the folder is an agent's. */
const heldLockLayer = (hold: HoldFolder) =>
  AgentLock.layerHeld({
    command: hold.command,
    wait: Duration.seconds(hold.waitSeconds),
    report: hold.report ?? logReport,
    address: hold.address,
    whileAgentRuns: hold.whileAgentRuns,
    cluster: hold.cluster
  })

/** An agent folder by its path, or a config the caller already loaded. */
export type ConfigSource = string | AgentConfig.LoadedConfig

const configOf = (source: ConfigSource, report: Report) =>
  typeof source === "string" ? configLayer(source, report) : loadedConfigLayer(source, report)

/**
 * The media store, with voice notes transcribed at the provider's `/audio/transcriptions` (`transcriptionModel`) over
 * an undici client of its own that sends no known secret in a body (RedactingHttpClient), as recall's embedder does.
 */
const mediaLayer = MediaStore.layer.pipe(
  Layer.provide(Transcription.layerFromConfig.pipe(
    Layer.provide(RedactingHttpClient.layer),
    Layer.provide(NodeHttpClient.layerUndici)
  ))
)

/**
 * Config, kern.db, the kernel and the tools' services, with no tool registered yet. A turn runner passes `hold`:
 * the folder's lock is taken before kern.db is opened and released after everything above it has closed.
 */
const kernelCoreLayer = (source: ConfigSource, report: Report, hold?: HoldFolder, checkDatabase = false) => {
  // A turn runner exports its telemetry when a collector is configured (telemetry.ts): over the config, under the rest.
  const config = hold === undefined
    ? configOf(source, report)
    : Telemetry.layer(report).pipe(Layer.provideMerge(heldLockLayer(hold).pipe(Layer.provideMerge(configOf(source, report)))))
  const database = AgentDatabase.layer(checkDatabase).pipe(Layer.provideMerge(config))
  const kernel = Kernel.layerFromConfigWith(approvalGate, hold?.capabilities).pipe(Layer.provideMerge(database))
  // The spend ceiling every model call of the agent goes through (the model, the summaries, the embedder): one guard.
  const guarded = SpendGuard.layer.pipe(Layer.provideMerge(kernel))
  // Files that come with messages (issue 32): stored once, read by the channels that take them and the prompt that sends them.
  return Layer.mergeAll(ToolServices.layer, RecallLayers.layer, Channels.layer, ScheduleStore.Default, mediaLayer).pipe(
    Layer.provideMerge(guarded)
  )
}

/**
 * Config, kern.db and the kernel with the built-in tools and the MCP servers' tools registered (each server connected
 * or failed once): what kernel commands run against.
 */
export const kernelAgentLayer = (source: ConfigSource, report: Report = logReport) =>
  Layer.mergeAll(Builtins.layer, ReadSkill.layer, McpServers.layerReady, runningAgentToolsRegistered).pipe(
    Layer.provideMerge(kernelCoreLayer(source, report))
  )

/**
 * The tools only a running agent can carry out (`jobs`, `spawn`), registered so what the kernel commands list and
 * what `kern context show` previews is what the running agent has; called here, they say a running agent is needed.
 */
const runningAgentToolsRegistered = Layer.mergeAll(
  JobsTool.layer.pipe(Layer.provide(Jobs.unavailable)),
  Spawn.layer.pipe(Layer.provide(SubAgents.unavailable))
)

/** kernelAgentLayer with the folder held: what a single turn needs below the model. */
const heldKernelAgentLayer = (source: ConfigSource, hold: HoldFolder) =>
  Layer.mergeAll(Builtins.layer, ReadSkill.layer, McpServers.layerReady).pipe(
    Layer.provideMerge(kernelCoreLayer(source, hold.report ?? logReport, hold))
  )

/**
 * The configured model (over undici) on top of `below`, which must provide the config. The same HttpClient is the
 * agent's ambient one, for what is built on the agent (channels); the tools' client is guarded under its own Tag. It
 * sends no known secret in a body (RedactingHttpClient): not to the model, not to Telegram or Slack.
 */
const withModel = <A, E, R>(below: Layer.Layer<A, E, R>) =>
  Provider.heartbeatLayer.pipe(
    Layer.provideMerge(Provider.layer),
    // The model's requests go over kern's lean client (ModelHttpClient.ts), through the same redacting door: a door
    // of its own (Layer.fresh), for a layer is built once per build and shared, and the shared one sits over undici
    // (the agent's ambient client below, the media's): the model was given that one, a span and a FinalizationRegistry
    // entry per request.
    Layer.provide(Layer.fresh(RedactingHttpClient.layer).pipe(Layer.provide(ModelHttpClient.layer))),
    Layer.provideMerge(RedactingHttpClient.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))),
    Layer.provideMerge(below)
  )

/** The context: segments in kern.db, summaries by the summary model (`summaryModel`, else `model`). */
const contextLayer = ContextWindow.Default.pipe(Layer.provide(Summarizer.layer), Layer.provideMerge(SegmentStoreSql.layer))

/** The loop's services (queue, sessions, turn runner) over the notes summary and the context the prompt carries. */
const agentLoop = AgentLive.layer.pipe(Layer.provideMerge(Layer.mergeAll(NotesSummary.layer, contextLayer)))

/**
 * Everything a turn needs, with the folder held: the kernel and tools, the configured model, sessions, the queue,
 * the turn runner, the memory commits (a last one when the layer closes, before the folder is let go) and the
 * notes summary.
 */
export const agentRuntimeLayer = (source: ConfigSource, hold: HoldFolder) =>
  Layer.mergeAll(agentLoop, MemoryCommits.layer(hold.report)).pipe(
    Layer.provideMerge(withModel(heldKernelAgentLayer(source, hold)))
  )

/**
 * The long-running agent, with the folder held, not yet serving: as agentRuntimeLayer, plus the AgentRuntime (whose
 * building replays what an earlier process accepted and never recorded into the queue) and the recall worker; the
 * built-in tools are registered once it exists, so the `kern` tool reports its live session and queue. Tests that
 * drive turns by hand (`runtime.step`) build this; everything else builds runningAgentLayer.
 */
export const runningAgentCoreLayer = (
  source: ConfigSource,
  hold: HoldFolder,
  /** The conversations' door when not the agent's own cluster over kern.db (a hosted agent among several runners). */
  conversations?: Layer.Layer<Conversations>
) => {
  const runtimeOnly = conversations === undefined ? AgentRuntimeLive.layer : AgentRuntimeLive.layerWith(conversations)
  const runtime = runtimeOnly.pipe(
    Layer.provideMerge(Layer.mergeAll(agentLoop, MemoryCommits.layer(hold.report))),
    Layer.provideMerge(withModel(kernelCoreLayer(source, hold.report ?? logReport, hold, true)))
  )
  const liveInfo = RuntimeInfo.layerWith(Effect.map(Effect.zip(AgentRuntime, ContextWindow), ([agent, context]) => ({
    queueLength: Effect.map(agent.status, (status) => status.queued),
    session: Effect.flatMap(agent.currentSession, (session) =>
      Effect.map(session.writer.stats, (stats) => Option.some({ id: session.id, ...stats }))),
    context: Effect.flatMap(agent.currentSession, (session) =>
      Effect.map(context.lastBreakdown(session.id), Option.map(({ budget, cut, injected, messages, tokens }) => ({
        maxContextTokens: budget.maxContextTokens,
        ...tokens,
        cut,
        messages,
        summaries: injected.length
      }))))
  })))
  // Recall indexes in the background: a backfill at start-up, then after each turn; so do the summaries that are behind.
  // MCP servers connect in the background too: a slow or failing server never holds the agent back.
  // Work that reports back later (background jobs, sub-agents, schedules) posts its turns through the runtime.
  // Sub-agents (spawn) run their turns in the runtime and report back through the followups.
  const followups = FollowupsLive.layer.pipe(Layer.provide(InboxSql.layerSql))
  const subagents = SubagentsLive.layer.pipe(Layer.provide(InboxSql.layerSql))
  // Background jobs report their ends through the followups; a job left running by the last process is reported now.
  const jobs = JobsLive.layer.pipe(Layer.provideMerge(JobStore.Default))
  const tools = Layer.mergeAll(Builtins.layerWith(liveInfo, Layer.effect(Jobs.Jobs, Jobs.Jobs)), JobsTool.layer, Spawn.layer, ReadSkill.layer)
  return Layer.mergeAll(tools, RecallWorker.layer, ContextCatchUp.layer, McpServers.layer).pipe(
    Layer.provideMerge(subagents),
    Layer.provideMerge(jobs),
    Layer.provideMerge(followups),
    Layer.provideMerge(runtime)
  )
}

/**
 * What serves the running agent, from when it is built until its scope closes: the turn loop (TurnLoop) and the
 * schedules, the heartbeat among them (ScheduleLoop). Closing it stops both before anything below closes (the sessions,
 * kern.db, the lock).
 */
export const servingLayer = Layer.mergeAll(TurnLoop.layer, ScheduleLoop.layer)

/**
 * The AgentRuntime (with its heartbeat schedule), serving, over layers the caller builds (agentRuntimeLayer and what
 * it needs): for a program or test that assembles the agent itself. Without servingLayer, `runtime.step` runs turns.
 */
export const servingRuntimeLayer = servingLayer.pipe(
  Layer.provideMerge(FollowupsLive.layer.pipe(Layer.provide(InboxSql.layerSql))),
  Layer.provideMerge(AgentRuntimeLive.layer)
)

/**
 * The long-running agent, with the folder held, serving: runningAgentCoreLayer, then `channels` attached over it (the
 * HTTP API, chat channels, a terminal's feed: each subscribes to the agent's events as it is built), then
 * servingLayer, so no channel misses a turn's events, the replayed ones included.
 */
export const runningAgentLayerWith = <A, E, R>(
  source: ConfigSource,
  hold: HoldFolder,
  channels: Layer.Layer<A, E, R>,
  conversations?: Layer.Layer<Conversations>
) => servingLayer.pipe(Layer.provideMerge(channels.pipe(Layer.provideMerge(runningAgentCoreLayer(source, hold, conversations)))))

/** The long-running agent with no channel attached, serving (see runningAgentLayerWith). */
export const runningAgentLayer = (source: ConfigSource, hold: HoldFolder) => runningAgentLayerWith(source, hold, Layer.empty)
