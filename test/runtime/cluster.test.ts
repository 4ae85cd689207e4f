import { SingleRunner } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schema } from "effect"
import * as NodePath from "node:path"
import * as Cluster from "../../src/runtime/cluster/Cluster.js"
import * as Database from "../../src/storage/Database.js"
import { migrations } from "../../src/storage/migrations.js"
import { makeTempDir } from "../support/tempDir.js"

// The names SingleRunner reads from the environment (CONSTANT_CASE of ShardingConfig's keys): common ones in a shell.
const hostile = { HOST: "x", PORT: "abc", SHARDS_PER_GROUP: "3", ENTITY_MESSAGE_POLL_INTERVAL: "soon", RUNNER_SHARD_WEIGHT: "-1" }

/** The variables set for the test's scope, and put back after. */
const withEnv = (vars: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(vars).map((key) => [key, process.env[key]]))
      Object.assign(process.env, vars)
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        for (const [key, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
        }
      })
  )

const kernDb = () => Database.layer({ filename: NodePath.join(makeTempDir(), "kern.db") })

const Runners = Schema.Array(Schema.Struct({ address: Schema.String }))
const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))

describe("the cluster substrate over kern.db", () => {
  it.scopedLive("takes nothing from the environment: HOST, PORT and the rest change nothing and break nothing", () =>
    Effect.gen(function*() {
      yield* withEnv(hostile)
      // What the environment does to a SingleRunner that is not pinned.
      const unpinned = yield* Layer.build(SingleRunner.layer({ runnerStorage: "sql" }).pipe(Layer.provide(kernDb()))).pipe(Effect.exit)
      expect(Exit.isFailure(unpinned)).toBe(true)

      const context = yield* Layer.build(Cluster.layer.pipe(Layer.provideMerge(kernDb())))
      const sql = Context.get(context, SqlClient.SqlClient).withoutTransforms()
      const locks = sql`SELECT count(*) AS n FROM cluster_locks`.pipe(Effect.flatMap(Schema.decodeUnknown(Count)), Effect.orDie)
      // The runner takes its 16 shards (not the environment's 3) under the pinned address (not x:abc).
      while ((yield* locks)[0]?.n !== Cluster.shardingConfig.shardsPerGroup) yield* Effect.sleep("20 millis")
      const runners = yield* sql`SELECT address FROM cluster_runners`.pipe(Effect.flatMap(Schema.decodeUnknown(Runners)), Effect.orDie)
      expect(runners).toHaveLength(1)
      expect(runners[0]!.address).toContain(String(34431))
      expect(runners[0]!.address).not.toContain("abc")
      expect(Cluster.shardingConfig.shardsPerGroup).toBe(16)
    }), { timeout: 60_000 })

  it.scopedLive("its tables live in kern.db beside kern's, with migrations of their own", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(Cluster.layer.pipe(Layer.provideMerge(kernDb())))
      const sql = Context.get(context, SqlClient.SqlClient).withoutTransforms()
      const Names = Schema.Array(Schema.Struct({ name: Schema.String }))
      const tables = yield* sql`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Names)),
        Effect.orDie
      )
      const names = tables.map((table) => table.name)
      expect(names).toEqual(expect.arrayContaining(["cluster_messages", "cluster_replies", "cluster_migrations", "kern_migrations", "inbox"]))
      // kern's own migration record holds kern's migrations only.
      const kern = yield* sql`SELECT count(*) AS n FROM kern_migrations`.pipe(Effect.flatMap(Schema.decodeUnknown(Count)), Effect.orDie)
      expect(kern[0]?.n).toBe(Object.keys(migrations).length)
    }), { timeout: 60_000 })
})
