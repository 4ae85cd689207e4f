import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { AgentConfig, type LoadedConfig } from "../config/AgentConfig.js"
import { type DatabaseConfigError, type DatabaseTarget, databaseTarget } from "../config/database.js"
import { recallMigration } from "../recall/pg/schema.js"
import type { DatabaseError } from "../storage/Database.js"
import * as DatabaseHealth from "../storage/databaseHealth.js"
import { layerFor } from "../storage/layerFor.js"
import { pgMigrationsWith } from "../storage/pg/migrations.js"

/** Where the loaded config puts kern.db's tables: `.kern/kern.db`, or its schema on the `database.url` server. */
export const targetOf = (loaded: LoadedConfig): Effect.Effect<DatabaseTarget, DatabaseConfigError> =>
  databaseTarget(loaded.config, loaded.env, loaded.paths.dbFile)

/** kern's PostgreSQL migrations with recall's tables (src/recall/pg/schema.ts), the place its DDL plugs in. */
export const agentPgMigrations = pgMigrationsWith(recallMigration)

/** The SqlClient of a target, with every table the agent uses. */
export const layerOf = (target: DatabaseTarget): Layer.Layer<SqlClient.SqlClient, DatabaseError> => layerFor(target, agentPgMigrations)

/**
 * The agent's kern.db as the config names it, made when missing: what the commands that read or tend it use (`kern
 * recall`, `users`, `schedule`, `jobs`, `gc`), which never refused a missing one; only a runtime that runs turns does
 * (`layer`).
 */
export const layerAsIs: Layer.Layer<SqlClient.SqlClient, DatabaseError | DatabaseConfigError, AgentConfig> = Layer.unwrapEffect(
  Effect.map(Effect.flatMap(AgentConfig, targetOf), layerOf)
)

/**
 * The agent's kern.db for a runtime that runs turns. On SQLite it is refused when missing beside existing sessions (never silently started over),
 * and a long-running agent (`check`) runs SQLite's quick_check first and refuses a damaged one; on PostgreSQL the
 * server keeps the data, and its own checks are its own.
 */
export const layer = (
  check = false
): Layer.Layer<SqlClient.SqlClient, DatabaseError | DatabaseConfigError | DatabaseHealth.DatabaseProblem, AgentConfig> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const loaded = yield* AgentConfig
    const target = yield* targetOf(loaded)
    if (target._tag === "postgres") return layerOf(target)
    const { paths } = loaded
    const opened = layerOf(target).pipe(
      Layer.provide(Layer.effectDiscard(DatabaseHealth.refuseMissing(paths.dbFile, paths.sessionsDir)))
    )
    return check ? Layer.effectDiscard(DatabaseHealth.quickCheck(paths.dbFile)).pipe(Layer.provideMerge(opened)) : opened
  }))
