import { EntityId, Sharding } from "@effect/cluster"
import { Cause, Context, Duration, Effect, Either, Layer, Option, Schedule, Schema } from "effect"
import { isLoopback } from "../channels/web/serverSetup.js"
import { databaseTarget } from "../config/database.js"
import * as PgDatabase from "../storage/pg/PgDatabase.js"
import { Agent, AgentPlacement, AgentReceivers, locate as locateAgent } from "../runtime/cluster/AgentEntity.js"
import * as AgentsLive from "../runtime/cluster/AgentsLive.js"
import { multiRunnerOptions } from "../runtime/cluster/MultiRunner.js"
import type { Report } from "../runtime/layers.js"
import type { LockHolder } from "../storage/LockFile.js"
import { HostAgentError } from "./AgentHandle.js"
import type { HostAgents } from "./HostAgents.js"
import { HostConfigError, defaultClusterSchema, type HostCluster } from "./HostConfig.js"

/**
 * `kern serve` as one runner among several sharing the agents (host.json's `database` and `cluster`): the runners'
 * cluster (src/runtime/cluster/: the Agent entity, its journal and the runners' registry in the shared schema, shard
 * locks on the PostgreSQL server) with this host as the AgentPlacement: an agent is live here only while the cluster
 * holds it here. Loaded only by such a host (the cluster's code stays out of every other process).
 */

/** Where an agent is live: the holder's HTTP server (this one or another runner's), and why it could not wake there. */
export class AgentLocation extends Schema.Class<AgentLocation>("AgentLocation")({
  url: Schema.String,
  problem: Schema.optional(Schema.String)
}) {}

export interface RunnerPlace {
  /** This runner's HTTP server as the other runners reach it (`http://<cluster.host>:<port>`). */
  readonly url: string
  /** Recorded in each agent folder's lock: the cluster and this runner's address in it (AgentLock). */
  readonly lock: NonNullable<LockHolder["cluster"]>
  /** Finds the runner holding an agent (placing it if no runner does), woken there for `reason`. */
  readonly locate: (name: string, reason: string) => Effect.Effect<AgentLocation, HostAgentError>
  /** Whether this runner holds the agent's shard now (in memory): the wake sources' RunnerShards. */
  readonly holdsHere: (name: string) => boolean
}

/** The cluster's database (host.json's `database`, `${NAME}` resolved from `env`) and this runner's place in it. */
export const runnerPlace = (cluster: HostCluster, http: { readonly host: string; readonly port: number }, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const target = databaseTarget({ name: "cluster", database: { url: cluster.database.url, schema: cluster.database.schema ?? defaultClusterSchema } }, env, "")
    if (Either.isLeft(target)) return yield* new HostConfigError({ message: target.left.message })
    if (target.right._tag !== "postgres") return yield* new HostConfigError({ message: "database.url: the runners share a PostgreSQL database" })
    // The other runners forward requests for the agents this one holds to its HTTP server: it must listen where they reach it.
    if (isLoopback(http.host) && !isLoopback(cluster.runner.host)) {
      return yield* new HostConfigError({
        message: `host: "${http.host}" is reachable from this machine only, and the other runners forward requests to ` +
          `http://${cluster.runner.host}:${http.port}: listen there (host "${cluster.runner.host}" or "0.0.0.0")`
      })
    }
    return {
      database: target.right,
      url: `http://${cluster.runner.host}:${http.port}`,
      lock: { database: `${target.right.shown}#${target.right.schema}`, runner: `${cluster.runner.host}:${cluster.runner.port}` }
    } as const
  })

/**
 * Joins the cluster until the scope closes (leaving it hands this runner's agents to the others at once) and returns
 * how to find an agent's runner. A request for an agent the cluster is moving (its runner died and its locks have not
 * expired yet) waits for the move, up to the lock expiry and half a minute more.
 */
export const joinCluster = (options: {
  readonly cluster: HostCluster
  readonly place: Effect.Effect.Success<ReturnType<typeof runnerPlace>>
  readonly agents: Context.Tag.Service<typeof HostAgents>
  readonly report: Report
}) =>
  Effect.gen(function*() {
    const { agents, place } = options
    const placement = AgentPlacement.of({
      url: place.url,
      hold: (name, conversations) =>
        Effect.flatMap(agents.handle(name), Option.match({
          onNone: () => Effect.logWarning(`kern serve: the cluster placed agent ${name} here, and this runner's host.json does not list it`),
          onSome: (handle) => handle.hold(conversations)
        })),
      wake: (name, reason) => agents.wake(name, reason)
    })
    const database = PgDatabase.layer({
      url: place.database.url,
      shown: place.database.shown,
      schema: place.database.schema,
      // The cluster migrates its own tables (cluster_*); kern adds none to its schema.
      migrations: {},
      maxConnections: 6
    })
    const runner = AgentsLive.layer(multiRunnerOptions(options.cluster.runner)).pipe(
      Layer.provideMerge(Layer.succeed(AgentPlacement, placement)),
      Layer.provideMerge(AgentReceivers.Default),
      Layer.provideMerge(database)
    )
    const context = yield* Layer.build(runner).pipe(
      Effect.mapError((error) => new HostConfigError({ message: `could not join the runners' cluster: ${error.message}` }))
    )
    const sharding = Context.get(context, Sharding.Sharding)
    const holdsHere = (name: string) => {
      const id = EntityId.make(name)
      return sharding.hasShardId(sharding.getShardId(id, Agent.getShardGroup(id)))
    }
    const patience = Duration.sum(Duration.seconds(options.cluster.runner.lockExpirationSeconds ?? 30), Duration.seconds(30))
    const unavailable = (name: string, message: string) => new HostAgentError({ name, reason: "unavailable", message })
    const locate = (name: string, reason: string) =>
      locateAgent(name, reason).pipe(
        // The agent moved while its runner answered (a runner joined or left, and its shard went elsewhere): the
        // answer is an interruption, and the cluster is asked again where it is now.
        Effect.sandbox,
        Effect.retry({ while: (cause) => Cause.isInterruptedOnly(cause), schedule: Schedule.spaced(Duration.millis(200)) }),
        Effect.unsandbox,
        Effect.map((found) => new AgentLocation(found)),
        Effect.mapError((error) => unavailable(name, `could not find agent ${name}'s runner: ${error.message}`)),
        Effect.timeoutFail({ duration: patience, onTimeout: () => unavailable(name, `agent ${name} is moving between runners; try again shortly`) }),
        Effect.provide(context),
        Effect.withSpan("kern.host.locate", { attributes: { agent: name } })
      )
    return { url: place.url, lock: place.lock, locate, holdsHere } satisfies RunnerPlace
  })
