import {
  ClusterWorkflowEngine,
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import { layerClientProtocol, layerSocketServer } from "@effect/platform-node/NodeClusterSocket"
import { RpcSerialization } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option } from "effect"
import type { ClusterConfig } from "../../config/cluster.js"
import { buildHoldingMigrationLock, withMigrationLock } from "../../storage/pg/migrationLock.js"
import { shardingConfig as singleRunnerConfig } from "./Cluster.js"

/** Where a runner is reached by the others, and where it listens (the same unless it sits behind a NAT or a proxy). */
export interface RunnerEndpoint {
  readonly host: string
  readonly port: number
}

export interface MultiRunnerOptions {
  /** The address the other runners reach this one at: its identity in the cluster, and the owner of its shard locks. */
  readonly address: RunnerEndpoint
  /** Where the socket server listens, when not at `address` (for example 0.0.0.0 in a container). */
  readonly listen?: RunnerEndpoint | undefined
  /**
   * Shards of the database's cluster: the same on every runner sharing it, and never changed once messages are stored
   * (a message's shard is stored with it). An agent is the unit placed on a runner (AgentEntity.ts): more shards than
   * runners spreads the agents evenly. Default 64.
   */
  readonly shardsPerGroup?: number | undefined
  /**
   * How long a dead runner's agents wait before a survivor takes them: a runner whose heartbeat is older than this is
   * no longer one of the cluster's runners, and its shards are assigned to the others. Default 30 s. Shorter fails
   * over sooner, at the price of a runner that stalls that long (a long GC pause, a stopped VM) losing its agents.
   */
  readonly lockExpiration?: Duration.DurationInput | undefined
  /** How often a runner renews its heartbeat and its shard locks. Default: a third of `lockExpiration`, at most 10 s. */
  readonly lockRefreshInterval?: Duration.DurationInput | undefined
  /**
   * The safety net for messages no runner announced (a sender's notify is lost with its runner) and the pace of the
   * shard acquisition loop after a runner dies. Default 5 s, as the single runner.
   */
  readonly messagePollInterval?: Duration.DurationInput | undefined
}

/**
 * The whole ShardingConfig of a runner among several, in code: @effect/cluster's own socket layer
 * (NodeClusterSocket.layer) reads what it is not given from the environment in CONSTANT_CASE (HOST, PORT, …), names
 * a user's shell may hold (examples/cluster, condition 5). Nothing here is read from the environment.
 */
export const multiRunnerConfig = (options: MultiRunnerOptions): ShardingConfig.ShardingConfig["Type"] => {
  const lockExpiration = Duration.decode(options.lockExpiration ?? Duration.seconds(30))
  const refresh = Duration.decode(
    options.lockRefreshInterval ?? Duration.min(Duration.seconds(10), Duration.unsafeDivide(lockExpiration, 3))
  )
  return {
    ...singleRunnerConfig,
    // Each runner has an address of its own: two runners on one address would both own every shard (condition 1).
    runnerAddress: Option.some(RunnerAddress.make(options.address.host, options.address.port)),
    runnerListenAddress: options.listen === undefined
      ? Option.none()
      : Option.some(RunnerAddress.make(options.listen.host, options.listen.port)),
    shardsPerGroup: options.shardsPerGroup ?? 64,
    // Advisory locks, held on a connection of the runner's: a runner killed loses them with its connection. They are
    // numbered per database, so one database holds one cluster of runners (the single runner uses rows instead).
    shardLockDisableAdvisory: false,
    shardLockExpiration: lockExpiration,
    shardLockRefreshInterval: refresh,
    // The runners' list is read this often: a dead runner drops out of it once its heartbeat is older than the
    // expiration, so the survivors see it gone within this of the expiry.
    refreshAssignmentsInterval: Duration.min(Duration.seconds(3), refresh),
    // A runner that answers no ping is marked unhealthy sooner than its heartbeat expires: the same pace.
    runnerHealthCheckInterval: refresh,
    entityMessagePollInterval: options.messagePollInterval ?? singleRunnerConfig.entityMessagePollInterval
  }
}

/**
 * The durable substrate of a runner among several sharing one PostgreSQL database: an @effect/cluster socket runner
 * listening on its own address (runners send each other messages and pings over it), the message journal and the
 * runners' registry in the database (`cluster_*` tables of the SqlClient given), and the shard locks as PostgreSQL
 * advisory locks held on one connection of the runner's (SqlRunnerStorage): a runner killed loses its connection and
 * with it its locks, and the survivors take its shards once its heartbeat is older than `lockExpiration`.
 *
 * Messages are at least once: a message is processed when its handler completed; a runner killed while a handler ran
 * leaves the message pending and a survivor runs it again. Handlers dedupe (AgentEntity.ts: the inbox id).
 *
 * The single-runner cluster over kern.db (Cluster.ts) stays the default; this one is selected by the host's config.
 * Like it, its loops run on the real clock whatever Clock the caller has.
 */
export const multiRunner = (options: MultiRunnerOptions) => {
  const config = ShardingConfig.layer(multiRunnerConfig(options))
  /**
   * The journal's ids are 64-bit snowflakes, which the cluster reads back as BIGINT text (PgClient's default, and
   * kern.db's client past 2^53: PgDatabase.bigintOrText): a client that turns every BIGINT into a JavaScript number
   * would round them and mix messages up. Checked before the cluster starts, with a message saying what to change.
   */
  const exactIds = Layer.effectDiscard(Effect.gen(function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const rows = yield* sql<{ id: unknown }>`SELECT CAST(${"9007199254740993"} AS BIGINT) AS id`.pipe(Effect.orDie)
    const id = rows[0]?.id
    if (String(id) !== "9007199254740993") {
      return yield* Effect.dieMessage(
        "kern: the cluster's database client reads BIGINT as a rounded number; give the cluster a PgClient with the default type parsers"
      )
    }
  }))
  /**
   * The cluster's migrations table, made before its storage layers migrate, one runner at a time: their Migrator
   * looks the table up and then creates it, and two runners starting together on a new database both created it (one
   * died: `relation "cluster_migrations" already exists`). Its rows are still the Migrator's, under its own table lock.
   */
  const migrationsTable = Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.onDialectOrElse({
      pg: () =>
        withMigrationLock(sql, "cluster_migrations")(sql`CREATE TABLE IF NOT EXISTS cluster_migrations (
          migration_id integer primary key,
          created_at timestamp with time zone not null default now(),
          name text not null
        )`),
      orElse: () => Effect.void
    }).pipe(Effect.orDie)
  }))
  const runner = SocketRunner.layer.pipe(
    Layer.provide([layerSocketServer, layerClientProtocol]),
    Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(layerClientProtocol)))
  )
  return ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(runner),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    // Its tables are made as it builds, with CREATE TABLE IF NOT EXISTS outside any lock: two runners starting together
    // on a new database raced in PostgreSQL's catalog ("duplicate key value violates unique constraint
    // pg_type_typname_nsp_index") and one died. Built one runner at a time.
    Layer.provide(Layer.orDie(buildHoldingMigrationLock("cluster_runner_storage")(SqlRunnerStorage.layer))),
    Layer.provide([config, RpcSerialization.layerMsgPack, exactIds, migrationsTable]),
    Layer.locallyEffect((build) => Effect.withClock(build, Clock.make()))
  )
}

/** The runner's options from its config (`cluster`, src/config/cluster.ts). */
export const multiRunnerOptions = (config: ClusterConfig): MultiRunnerOptions => ({
  address: { host: config.host, port: config.port },
  listen: config.listen === undefined ? undefined : { host: config.listen, port: config.port },
  shardsPerGroup: config.shards,
  lockExpiration: config.lockExpirationSeconds === undefined ? undefined : Duration.seconds(config.lockExpirationSeconds)
})
