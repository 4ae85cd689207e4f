import type { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"

/**
 * `effect` run in one transaction holding a PostgreSQL advisory lock named by `name`: processes that start at once on
 * one database (runners of a cluster, agents sharing a server) create a schema and its migrations table one after
 * another. The
 * lock takes the two-key form, whose keys never meet the single-key advisory locks the cluster's shards use.
 *
 * Needed because "does it exist? then create it" races: @effect/sql's Migrator creates its table after a lookup
 * (`relation "cluster_migrations" already exists` when two runners started together), and even `CREATE … IF NOT
 * EXISTS` can fail on a concurrent twin.
 */
export const withMigrationLock = (sql: SqlClient.SqlClient, name: string) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  sql.withTransaction(Effect.zipRight(sql`SELECT pg_advisory_xact_lock(hashtext('kern.migrate'), hashtext(${name}))`, effect))
