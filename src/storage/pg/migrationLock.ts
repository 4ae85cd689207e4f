import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Layer } from "effect"

/** The advisory lock's two keys for the name given as the statement's first parameter: one key for both helpers. */
const lockKey = "hashtext('kern.migrate'), hashtext($1)"

/**
 * `effect` run in one transaction holding a PostgreSQL advisory lock named by `name`: processes that start at once on
 * one database (runners of a cluster, agents sharing a server) create a schema and its migrations table one after
 * another. The lock takes the two-key form, whose keys never meet the single-key advisory locks the cluster's shards
 * use.
 *
 * Needed because "does it exist? then create it" races: @effect/sql's Migrator creates its table after a lookup
 * (`relation "cluster_migrations" already exists` when two runners started together), and even `CREATE … IF NOT
 * EXISTS` can fail on a concurrent twin.
 */
export const withMigrationLock = (sql: SqlClient.SqlClient, name: string) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  sql.withTransaction(Effect.zipRight(sql.unsafe(`SELECT pg_advisory_xact_lock(${lockKey})`, [name]), effect))

/**
 * `layer` built while this process holds the advisory lock named by `name`, on a connection of its own released once
 * the build is done: for a library layer that creates its tables as it builds (`CREATE TABLE IF NOT EXISTS`, outside
 * any transaction of ours), whose statements cannot run inside withMigrationLock's transaction without every fiber it
 * starts inheriting it. The lock is a session lock, so it is let go explicitly before the connection goes back to
 * the pool; a process that dies holding it loses it with its connection. Other databases build the layer as it is.
 */
export const buildHoldingMigrationLock = (name: string) =>
<A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E | SqlError.SqlError, R | SqlClient.SqlClient> =>
  Layer.scopedContext(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const build = Layer.buildWithScope(layer, scope)
    return yield* sql.onDialectOrElse({
      pg: () =>
        Effect.scoped(Effect.gen(function*() {
          const conn = yield* sql.reserve
          yield* Effect.acquireRelease(
            conn.executeRaw(`SELECT pg_advisory_lock(${lockKey})`, [name]),
            () => Effect.ignore(conn.executeRaw(`SELECT pg_advisory_unlock(${lockKey})`, [name]))
          )
          return yield* build
        })),
      orElse: () => build
    })
  }))
