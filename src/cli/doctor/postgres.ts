import type { SqlClient } from "@effect/sql"
import { type Context, Effect, Either, Layer, Option, Schema, type Scope } from "effect"
import type { DatabaseTarget } from "../../config/database.js"
import { agentPgMigrations } from "../../runtime/agentDatabase.js"
import { newestId } from "../../storage/Database.js"
import * as PgDatabase from "../../storage/pg/PgDatabase.js"
import { problem, resultOf, warning } from "./Check.js"
import type { DatabaseOutcome } from "./database.js"

const check = "database"
const Newest = Schema.Array(Schema.Struct({ newest: Schema.NullOr(Schema.Number) }))

/**
 * kern.db's tables on PostgreSQL (`database.url`): the server reached with the configured login, the agent's schema
 * at the migration this kern expects. Nothing is created or migrated; the URL is named without its password.
 */
export const postgresCheck = (
  target: Extract<DatabaseTarget, { readonly _tag: "postgres" }>
): Effect.Effect<DatabaseOutcome, never, Scope.Scope> =>
  Effect.gen(function*() {
    const where = `PostgreSQL ${target.shown}, schema ${target.schema}`
    const none = (findings: Parameters<typeof resultOf>[1]) => ({ result: resultOf(check, findings, ""), reader: Option.none() })
    const opened = yield* Effect.either(Layer.build(PgDatabase.client({ url: target.url, shown: target.shown, schema: target.schema, maxConnections: 2 })))
    if (Either.isLeft(opened)) {
      return none([problem(
        `${where} could not be reached: ${opened.left.detail}`,
        "check database.url (host, port, user, password, database) and that the server accepts this machine"
      )])
    }
    const reader = opened.right
    const applied = yield* Effect.either(Effect.provide(
      Effect.flatMap(Effect.flatMap(PgDatabase.sqlClient, (sql) => sql`SELECT max(migration_id) AS newest FROM kern_migrations`), Schema.decodeUnknown(Newest)),
      reader
    ))
    const expected = newestId(agentPgMigrations)
    if (Either.isLeft(applied)) {
      return {
        result: resultOf(check, [warning(`${where} has no kern tables yet`, "kern creates them at the agent's next start (kern run or kern start)")], ""),
        reader: Option.none<Context.Context<SqlClient.SqlClient>>()
      }
    }
    const at = applied.right[0]?.newest ?? 0
    const findings = at > expected
      ? [problem(`${where} is at migration ${at}, newer than this kern knows (${expected})`, "run the kern that wrote it (update this one)")]
      : at < expected
      ? [warning(`${where} is at migration ${at} of ${expected}`, "kern migrates it at the next start of the agent (kern run or kern start)")]
      : []
    return { result: resultOf(check, findings, `${where}: reachable, at migration ${expected}`), reader: Option.some(reader) }
  })
