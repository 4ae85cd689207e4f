import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

export class BrowserSessionsError extends Schema.TaggedError<BrowserSessionsError>()("BrowserSessionsError", {
  message: Schema.String
}) {}

/** A logged-in browser as kern.db keeps it: the hash of its secret, never the secret. */
export const BrowserSession = Schema.Struct({
  secretHash: Schema.String,
  createdAtMs: Schema.Number,
  lastSeenAtMs: Schema.Number
})
export type BrowserSession = typeof BrowserSession.Type

/**
 * The web UI's sessions in kern.db (`browser_sessions`), so a restart of the agent keeps its browsers logged in.
 * Rows are keyed by the session secret's hash; the limits (idle, absolute, how many) are the caller's (auth.ts).
 */
export class BrowserSessions extends Effect.Service<BrowserSessions>()("kern/channels/web/BrowserSessions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const failed = (what: string) => (error: { readonly message: string }) =>
      new BrowserSessionsError({ message: `could not ${what} the browser sessions in kern.db: ${error.message}` })

    const findRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: BrowserSession,
      execute: (hash) => sql`SELECT secret_hash, created_at_ms, last_seen_at_ms FROM browser_sessions WHERE secret_hash = ${hash}`
    })

    const find = (secretHash: string) =>
      findRow(secretHash).pipe(Effect.mapError(failed("read")), Effect.withSpan("kern.web.sessions.find"))

    const insert = (secretHash: string, nowMs: number) =>
      sql`INSERT INTO browser_sessions (secret_hash, created_at_ms, last_seen_at_ms) VALUES (${secretHash}, ${nowMs}, ${nowMs})`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("write")),
        Effect.withSpan("kern.web.sessions.insert")
      )

    const touch = (secretHash: string, nowMs: number) =>
      sql`UPDATE browser_sessions SET last_seen_at_ms = ${nowMs} WHERE secret_hash = ${secretHash}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("write")),
        Effect.withSpan("kern.web.sessions.touch")
      )

    const remove = (secretHash: string) =>
      sql`DELETE FROM browser_sessions WHERE secret_hash = ${secretHash}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("write")),
        Effect.withSpan("kern.web.sessions.remove")
      )

    /** Forgets the sessions idle or old past the limits, then all but the `keep` most recently seen. */
    const prune = (limits: { readonly seenBeforeMs: number; readonly createdBeforeMs: number; readonly keep: number }) =>
      Effect.zipRight(
        sql`DELETE FROM browser_sessions WHERE last_seen_at_ms <= ${limits.seenBeforeMs} OR created_at_ms <= ${limits.createdBeforeMs}`,
        sql`DELETE FROM browser_sessions WHERE secret_hash NOT IN (
          SELECT secret_hash FROM browser_sessions ORDER BY last_seen_at_ms DESC, created_at_ms DESC LIMIT ${limits.keep}
        )`
      ).pipe(Effect.asVoid, Effect.mapError(failed("prune")), Effect.withSpan("kern.web.sessions.prune"))

    return { find, insert, touch, remove, prune } as const
  })
}) {}
