import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import type { KnownSecret } from "../config/KnownSecrets.js"
import type { Conversations } from "../runtime/Conversations.js"
import * as ChatChannels from "../channels/chatChannels.js"
import { AgentConfig } from "../config/AgentConfig.js"
import * as WebServer from "../channels/web/WebServer.js"
import { AgentRuntime } from "../runtime/AgentRuntime.js"
import * as InboxSql from "../runtime/Inbox.js"
import { Inbox } from "../runtime/Inbox.js"
import * as Layers from "../runtime/layers.js"
import * as RetentionJob from "../runtime/RetentionJob.js"
import { JobStore } from "../tools/JobStore.js"
import { SubAgentStore } from "../tools/subagents/SubAgentStore.js"
import type { HostedAgent } from "./HostConfig.js"
import { keptLive } from "./keptLive.js"

/** What the host asks of a live agent besides its app: whether it has anything to do. */
export class AgentActivity extends Context.Tag("kern/host/AgentActivity")<AgentActivity, {
  /** A turn runs or is queued, a message is accepted and not yet answered, a background job or sub-agent runs. */
  readonly busy: Effect.Effect<boolean>
  /** Why the agent must not be passivated at all while hosted (none: it may be, once idle). */
  readonly keptLive: Option.Option<string>
}>() {}

/** What the live agent reports to the host; `clustered`: a runner among several (keptLive.ts decides what is kept live). */
const activityLayer = (clustered: boolean) => Layer.effect(
  AgentActivity,
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const inbox = yield* Inbox
    const jobs = yield* JobStore
    const subagents = yield* SubAgentStore
    const { env } = yield* AgentConfig
    // A store that cannot be read counts as busy: the agent is kept, never passivated on a guess.
    const count = <E>(effect: Effect.Effect<number, E>) =>
      Effect.catchAllCause(effect, (cause) => Effect.as(Effect.logWarning("kern serve: could not tell whether the agent is idle", cause), 1))
    const busy = Effect.gen(function*() {
      const idle = yield* runtime.idle
      const inboxSize = yield* count(inbox.size)
      const jobsRunning = yield* count(Effect.map(jobs.running, (rows) => rows.length))
      const subs = yield* count(Effect.map(subagents.running, (rows) => rows.length))
      return !idle || inboxSize > 0 || jobsRunning > 0 || subs > 0
    })
    return { busy, keptLive: keptLive(env, clustered) }
  })
).pipe(Layer.provide(Layer.merge(SubAgentStore.Default, InboxSql.layerSql)))

/** Where a live agent's app sits on the host's server, and what it reports. */
export interface LiveOptions {
  readonly host: string
  readonly port: number
  /** `http://host:port` of the host's server. */
  readonly hostUrl: string
  readonly report: Layers.Report
  /** A runner among several: its place in the cluster, recorded in each agent folder's lock (AgentLock). */
  readonly cluster?: Layers.HoldFolder["cluster"]
  /**
   * How an agent's lines are logged, given its secrets: the host's log redacts each agent's own (its provider key,
   * its token) in that agent's lines. Applied to its wake (every fiber its layers fork) and each request it serves.
   */
  readonly logging?: AgentLogging | undefined
}

export type AgentLogging = (secrets: ReadonlyArray<KnownSecret>) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * One hosted agent's running layers, as `kern start` runs them (runningAgentLayerWith, with retention) but with no
 * server of its own: its HTTP API and UI are an app the host serves under `/agents/<name>`, and the chat channels
 * attach as in `kern start`. The folder's lock is taken at once or not at all: a folder another `kern start` holds is
 * refused with what holds it.
 */
export const liveAgentLayer = (
  agent: HostedAgent,
  token: string,
  options: LiveOptions,
  /** The cluster's door, when the cluster holds the agent on this runner (one among several). */
  conversations: Option.Option<Layer.Layer<Conversations>> = Option.none()
) => {
  const basePath = `/agents/${agent.name}`
  const app = WebServer.appLayer({
    host: options.host,
    port: options.port,
    token,
    corsOrigins: [],
    command: "kern serve",
    basePath,
    report: options.report
  })
  const hold: Layers.HoldFolder = {
    command: "kern serve",
    waitSeconds: 5,
    report: options.report,
    address: `${options.hostUrl}${basePath}`,
    whileAgentRuns: "stop it there (kern stop) for kern serve to host it",
    cluster: options.cluster
  }
  return activityLayer(options.cluster !== undefined).pipe(
    Layer.provideMerge(RetentionJob.layer),
    Layer.provideMerge(
      Layers.runningAgentLayerWith(agent.dir, hold, Layer.mergeAll(app, ChatChannels.layer), Option.getOrUndefined(conversations))
    )
  )
}

/** A live agent: its app, its activity, and the scope whose closing passivates it. */
export interface LiveAgent {
  readonly app: Context.Tag.Service<WebServer.AgentHttpApp>
  readonly activity: Context.Tag.Service<AgentActivity>
  /** Its browser sessions, checked by the host before a request reaches the agent (agentGate.ts); its own guard's when absent. */
  readonly sessions?: Context.Tag.Service<WebServer.AgentSessions> | undefined
  readonly scope: Scope.CloseableScope
  /** What each request the agent serves runs within (its logging), besides its app. */
  readonly within?: (<A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) | undefined
}

/** Builds `layer` in a scope of its own; a failed build closes what it had built. */
export const buildLive = <E, R>(layer: Layer.Layer<WebServer.AgentHttpApp | WebServer.AgentSessions | AgentActivity, E, R>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope).pipe(
      Effect.onExit((exit) => Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void)
    )
    return {
      app: Context.get(context, WebServer.AgentHttpApp),
      activity: Context.get(context, AgentActivity),
      sessions: Context.get(context, WebServer.AgentSessions),
      scope
    } satisfies LiveAgent
  })
