import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Either, Exit, Layer, Option, Ref, Schema } from "effect"
import { ClusterConfig } from "../../src/config/cluster.js"
import { Conversations } from "../../src/runtime/Conversations.js"
import { AgentPlacement, AgentReceivers, conversationsOf } from "../../src/runtime/cluster/AgentEntity.js"
import * as AgentsLive from "../../src/runtime/cluster/AgentsLive.js"
import { multiRunner, multiRunnerConfig, multiRunnerOptions } from "../../src/runtime/cluster/MultiRunner.js"
import { delivery } from "../support/deliveries.js"
import { freePort } from "../support/freePort.js"
import { startPostgres } from "../support/postgres.js"
import { eventuallyEffect } from "../support/waitFor.js"

// One runner of the multi-runner cluster in this process, on a real PostgreSQL server: the Agent entity (one per
// agent), its placement and the agents' doors. Two runners and kill -9 are test/runtime/clusterRunners.test.ts.

/** The variables @effect/cluster's own socket layer would read (CONSTANT_CASE of ShardingConfig's keys). */
const hostile = { HOST: "x", PORT: "abc", SHARDS_PER_GROUP: "3", SHARD_LOCK_EXPIRATION: "soon" }

describe("agents on the multi-runner cluster", () => {
  it("cluster config: where the other runners reach this one, checked", () => {
    const decode = Schema.decodeUnknownEither(ClusterConfig)
    const config = decode({ host: "10.0.0.5", port: 34431, listen: "0.0.0.0", lockExpirationSeconds: 10 })
    expect(Either.isRight(config)).toBe(true)
    const options = multiRunnerOptions(Either.getOrThrow(config))
    const sharding = multiRunnerConfig(options)
    expect(Option.getOrThrow(sharding.runnerAddress)).toMatchObject({ host: "10.0.0.5", port: 34431 })
    expect(Option.getOrThrow(sharding.runnerListenAddress)).toMatchObject({ host: "0.0.0.0", port: 34431 })
    expect(sharding.shardsPerGroup).toBe(64)
    // The locks are renewed three times within their expiry.
    expect(Math.round(Duration.toMillis(sharding.shardLockRefreshInterval))).toBe(3333)

    const unreachable = decode({ host: "0.0.0.0", port: 34431 })
    expect(Either.isLeft(unreachable) && String(unreachable.left)).toContain("no address another runner can reach")
    expect(Either.isLeft(decode({ host: "10.0.0.5", port: 70000 }))).toBe(true)
    expect(Either.isLeft(decode({ host: "10.0.0.5", port: 1, lockExpirationSeconds: 1 }))).toBe(true)
  })

  it.scopedLive("a message reaches its agent once, the agent is held on the runner while its entity lives, the journal forgets what was received; the environment changes nothing; a client that rounds BIGINT is refused", () =>
    Effect.gen(function*() {
      const pg = yield* startPostgres
      const saved = { ...process.env }
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        for (const key of Object.keys(hostile)) {
          if (saved[key] === undefined) delete process.env[key]
          else process.env[key] = saved[key]
        }
      }))
      Object.assign(process.env, hostile)

      const held = yield* Ref.make<ReadonlyArray<string>>([])
      const placement = Layer.succeed(AgentPlacement, {
        hold: (agent) => Effect.acquireRelease(Ref.update(held, (all) => [...all, `+${agent}`]), () => Ref.update(held, (all) => [...all, `-${agent}`])),
        wake: () => Effect.void,
        url: "http://127.0.0.1:1"
      })
      const port = yield* freePort
      const runner = AgentsLive.layer({ address: { host: "127.0.0.1", port }, shardsPerGroup: 8 }).pipe(
        Layer.provideMerge(placement),
        Layer.provideMerge(AgentReceivers.Default),
        Layer.provideMerge(PgClient.layer({ url: pg.url, maxConnections: 4 }))
      )
      const context = yield* Layer.build(runner)
      const sql = yield* Effect.provide(SqlClient.SqlClient, context)

      const received = yield* Ref.make<ReadonlyArray<string>>([])
      const doorOf = (agent: string) =>
        Effect.gen(function*() {
          const conversations = yield* Effect.provide(Conversations, Layer.provide(conversationsOf(agent), Layer.succeedContext(context)))
          return yield* conversations.open((d) => Ref.update(received, (all) => [...all, `${agent}:${d.id}:${d.text}`]))
        })
      const ada = yield* doorOf("ada")
      const bob = yield* doorOf("bob")
      yield* ada.deliver(delivery(1, "first"), "main")
      // Handed over again (a replay of the inbox after a restart): one message.
      yield* ada.deliver(delivery(1, "first"), "main")
      yield* ada.deliver(delivery(2, "second"), "telegram-42")
      // The same inbox id for another agent is another message (each agent has its inbox).
      yield* bob.deliver(delivery(1, "bob's first"), "main")
      expect(yield* eventuallyEffect(Effect.map(Ref.get(received), (all) => all.length >= 3))).toBe(true)
      expect([...(yield* Ref.get(received))].sort()).toEqual(["ada:1:first", "ada:2:second", "bob:1:bob's first"])
      // Each agent was held on this runner once, by its one entity.
      expect([...(yield* Ref.get(held))].sort()).toEqual(["+ada", "+bob"])

      // The runner's address is its own, in the runners' registry; nothing came from HOST or PORT.
      const runners = yield* sql<{ address: string }>`SELECT address FROM cluster_runners`
      expect(runners.map((row) => row.address)).toEqual([`127.0.0.1:${port}`])

      // Once received, prune leaves nothing of ada's pending; bob's is his own to prune.
      const pending = (agent: string) =>
        sql<{ n: string }>`SELECT count(*) AS n FROM cluster_messages WHERE entity_id = ${agent}`.pipe(
          Effect.map((rows) => Number(rows[0]?.n))
        )
      expect(yield* eventuallyEffect(Effect.zipRight(ada.prune, Effect.map(pending("ada"), (n) => n === 0)))).toBe(true)
      expect(yield* pending("bob")).toBe(1)
      expect(yield* Ref.get(received)).toHaveLength(3)

      // A client that reads BIGINT as a (rounded) number, as kern.db's PgClient does, would mix the journal's 64-bit
      // ids up: the cluster refuses it before it starts.
      const rounding = PgClient.layer({
        url: pg.url,
        maxConnections: 1,
        // Every value as its text, but BIGINT (oid 20) as a number.
        types: { getTypeParser: (oid: number) => oid === 20 ? (value: string) => Number(value) : (value: string) => value }
      })
      const refused = yield* Effect.exit(Layer.build(
        multiRunner({ address: { host: "127.0.0.1", port: yield* freePort } }).pipe(Layer.provide(rounding))
      ))
      expect(Exit.isFailure(refused) && Cause.pretty(refused.cause)).toContain("reads BIGINT as a rounded number")
    }), 180_000)
})
