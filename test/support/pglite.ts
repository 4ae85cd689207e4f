import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite/vector"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Redacted } from "effect"
import type { Scope } from "effect/Scope"

/** A PGlite database (in memory) with pgvector, served over the PostgreSQL wire protocol on a loopback port. */
export interface Pglite {
  readonly url: Redacted.Redacted
  readonly db: PGlite
}

/**
 * Debian 12's PostgreSQL has no pgvector: the pgvector queries are tested on PGlite with its vector extension,
 * reached by `@effect/sql-pg` through pglite-socket as a real server would be. `CREATE EXTENSION vector` is done,
 * as an administrator would. Stopped when the scope closes.
 */
export const startPglite: Effect.Effect<Pglite, never, Scope> = Effect.acquireRelease(
  Effect.promise(async () => {
    const db = await PGlite.create({ extensions: { vector } })
    await db.exec("CREATE EXTENSION IF NOT EXISTS vector")
    const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1" })
    await server.start()
    const [host, port] = server.getServerConn().split(":")
    return { server, db, url: Redacted.make(`postgres://postgres@${host}:${port}/postgres`) }
  }),
  ({ db, server }) => Effect.promise(async () => {
    await server.stop()
    await db.close()
  })
).pipe(Effect.map(({ db, url }) => ({ db, url })))
