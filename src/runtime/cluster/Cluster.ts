import {
  ClusterWorkflowEngine,
  RunnerHealth,
  Runners,
  Sharding,
  ShardingConfig,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import { Clock, Duration, Effect, Layer } from "effect"

/**
 * Every ShardingConfig value, in code. @effect/cluster's SingleRunner reads the ones it is not given from the
 * environment in CONSTANT_CASE (HOST, PORT, SHARDS_PER_GROUP, …): common names a user's shell may hold, and PORT=abc
 * made the layer fail (examples/cluster, condition 5). kern reads none of them: the config is complete here.
 */
export const shardingConfig: ShardingConfig.ShardingConfig["Type"] = {
  // The runner address (never listened on: Runners.layerNoop) is the default one: the owner of the shard locks.
  ...ShardingConfig.defaults,
  // Few shards: fewer lock rows and less polling for one process. A message's shard is stored with it, so this number
  // never changes for an existing kern.db (a message on a shard beyond it would never be read again).
  shardsPerGroup: 16,
  // Every message sent in this process opens the storage read at once: the poll is only the safety net for what no
  // send announced (messages of an earlier process are read when the shards are taken at start) and the resolution of
  // a message's DeliverAt, which kern does not use yet. Each poll is one query on kern.db: 5 s costs nothing idle.
  entityMessagePollInterval: Duration.seconds(5),
  // The shard locks are this process's by the agent lock already: refreshing them is bookkeeping, and a refresh waits
  // for kern.db's write lock (up to its busy timeout, retried five times) while another process holds it, with the
  // event loop stopped meanwhile. Once a minute (the default is every 10 s); the locks expire after three.
  shardLockRefreshInterval: Duration.minutes(1),
  shardLockExpiration: Duration.minutes(3),
  // A conversation's handler holds no state of its own (the turn's is in the session file, synced by the runtime's
  // scope): an entity stopping does not wait for handlers that are waiting for a turn; their messages stay in the
  // journal, unanswered, and reach the conversation again after the restart.
  entityTerminationTimeout: Duration.zero,
  // On PostgreSQL the shard locks would be advisory locks, numbered per database and not per schema: two agents whose
  // kern.db share one server database (each in its schema) would take each other's shards, and the second's messages
  // would never be read. As rows in the agent's own schema they are its own, as on SQLite.
  shardLockDisableAdvisory: true
}

/**
 * The durable substrate of the running agent: a single-runner @effect/cluster whose message journal, runner row and
 * shard locks live in kern.db (tables `cluster_*`, migrated by the cluster under its own `cluster_migrations`, beside
 * kern's `kern_migrations`), and the cluster's WorkflowEngine.
 *
 * One process owns it per database file: two runners on one file share the default runner address, which is the
 * shard-lock owner, and both would run the same entity. kern's agent lock (.kern/agent.lock, taken before kern.db is
 * opened by every runtime that runs turns) already guarantees one turn-running process per folder; only such a
 * process builds this layer (src/runtime/layers.ts runningAgentLayer, through Conversations.layerDurable).
 *
 * Its own loops (the storage poll, shard locks, the entity reaper, metrics) run on the real clock, whatever Clock the
 * agent is given: they are infrastructure, and under TestClock every simulated second would wake each of them.
 */
export const layer = ClusterWorkflowEngine.layer.pipe(
  Layer.provideMerge(Sharding.layer),
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(SqlMessageStorage.layer),
  Layer.provide([Layer.orDie(SqlRunnerStorage.layer), RunnerHealth.layerNoop]),
  Layer.provide(ShardingConfig.layer(shardingConfig)),
  Layer.locallyEffect((build) => Effect.withClock(build, Clock.make()))
)
