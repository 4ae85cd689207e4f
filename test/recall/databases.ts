import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, type Redacted, Schedule, String as Str } from "effect"
import * as NodeCrypto from "node:crypto"
import type { LoadedConfig } from "../../src/config/AgentConfig.js"
import { recallMigration } from "../../src/recall/pg/schema.js"
import * as Database from "../../src/storage/Database.js"

/**
 * A database recall's behavioural tests run on: kern.db's SQLite, or a PostgreSQL server (PGlite with pgvector over
 * pglite-socket, or the real server without it). `sqlLayer` gives the agent folder's client: on PostgreSQL a schema
 * of its own, named from the folder, so two layers built for one folder in a test share it as they share a kern.db.
 */
export interface RecallDatabase {
  readonly name: string
  /** Whether the database keeps vectors (SQLite, PGlite with pgvector); the real Debian server has none. */
  readonly vectors: boolean
  readonly sqlLayer: (loaded: Pick<LoadedConfig, "paths">) => Layer.Layer<SqlClient.SqlClient, unknown>
  /** The stored vectors' widths (dimensions), one row per vector. */
  readonly vectorWidths: Effect.Effect<ReadonlyArray<number>, unknown, SqlClient.SqlClient>
}

export const sqlite: RecallDatabase = {
  name: "SQLite",
  vectors: true,
  sqlLayer: (loaded) => Database.layer({ filename: loaded.paths.dbFile }),
  vectorWidths: Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT length(embedding) AS n FROM recall_vectors`).pipe(
      Effect.map((rows) => rows.map((row) => row.n))
    )
}

/** The schema of an agent folder's tables in a test: `t_` and a hash of the folder. */
export const schemaOf = (dir: string) => `t_${NodeCrypto.createHash("sha256").update(dir).digest("hex").slice(0, 16)}`

/**
 * A client on `url` whose tables live in `schema` (made if missing, first on the search path, public after it for
 * pgvector's type), with the recall migration run in it. One connection, kept: the search path is the session's.
 */
export const schemaClient = (url: Redacted.Redacted, schema: string): Layer.Layer<SqlClient.SqlClient, unknown> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
    yield* sql.unsafe(`SET search_path TO "${schema}", public`)
    yield* recallMigration
  })).pipe(
    Layer.provideMerge(PgClient.layer({
      url,
      maxConnections: 1,
      idleTimeout: "1 hour",
      transformResultNames: Str.snakeToCamel,
      transformQueryNames: Str.camelToSnake
    })),
    // pglite-socket 0.1.5 drops the first connection made right after another closed; a second attempt connects.
    Layer.retry(Schedule.recurs(3))
  )

/** A PostgreSQL database whose server's URL is known once the file's `beforeAll` started it. */
export const postgres = (name: string, vectors: boolean, url: () => Redacted.Redacted): RecallDatabase => ({
  name,
  vectors,
  sqlLayer: (loaded) => Layer.unwrapEffect(Effect.sync(() => schemaClient(url(), schemaOf(loaded.paths.dir)))),
  vectorWidths: Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT vector_dims(embedding) AS n FROM recall_vectors`).pipe(
      Effect.map((rows) => rows.map((row) => row.n))
    )
})
