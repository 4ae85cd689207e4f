import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { toolFailure } from "../kernel/ToolFailure.js"
import { keptSpan } from "../kernel/keptSpan.js"

export const ContextCounters = Schema.Struct({
  /** Tokens of the model's context at the session's last step (the context window's count), 0 before any. */
  activeContextTokens: Schema.Number,
  compactions: Schema.Number,
  savedByCompactionBytes: Schema.Number,
  duplicates: Schema.Number,
  savedByDuplicatesBytes: Schema.Number
})
export type ContextCounters = typeof ContextCounters.Type

const zero: ContextCounters = {
  activeContextTokens: 0,
  compactions: 0,
  savedByCompactionBytes: 0,
  duplicates: 0,
  savedByDuplicatesBytes: 0
}

/** Tokens from bytes: about four bytes a token for English and code. */
export const estimateTokens = (bytes: number): number => Math.ceil(bytes / 4)

const failed = (what: string) => (error: { readonly message: string }) =>
  toolFailure("UNEXPECTED", `context stats: could not ${what} kern.db's context_stats: ${error.message}`)

/**
 * Per-session counters of the context's size and what compaction and duplicate replacement saved. They belong to
 * the session, so they live in kern.db (`context_stats`): a later process on the same session counts on from them.
 */
export class ContextStats extends Effect.Service<ContextStats>()("kern/tools/ContextStats", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const row = SqlSchema.findOne({
      Request: Schema.String,
      Result: ContextCounters,
      execute: (sessionId) =>
        sql`SELECT active_context_tokens, compactions, saved_by_compaction_bytes, duplicates, saved_by_duplicates_bytes
          FROM context_stats WHERE session_id = ${sessionId}`
    })
    // When a session's counters last changed: retention ages out those of sessions idle past retention.counts.
    const write = (span: string, statement: (nowMs: number) => Effect.Effect<unknown, { readonly message: string }>) =>
      Effect.flatMap(Clock.currentTimeMillis, statement).pipe(Effect.asVoid, Effect.mapError(failed("update")), keptSpan(span))
    return {
      setActiveContextTokens: (sessionId: string, tokens: number) =>
        write(
          "kern.tools.ContextStats.setActiveContextTokens",
          (now) =>
            sql`INSERT INTO context_stats (session_id, active_context_tokens, updated_at_ms) VALUES (${sessionId}, ${tokens}, ${now})
            ON CONFLICT (session_id) DO UPDATE SET active_context_tokens = excluded.active_context_tokens,
              updated_at_ms = excluded.updated_at_ms`
        ),
      recordCompaction: (sessionId: string, originalBytes: number, compactedBytes: number) =>
        write(
          "kern.tools.ContextStats.recordCompaction",
          (now) =>
            sql`INSERT INTO context_stats (session_id, compactions, saved_by_compaction_bytes, updated_at_ms)
            VALUES (${sessionId}, 1, ${Math.max(0, originalBytes - compactedBytes)}, ${now})
            ON CONFLICT (session_id) DO UPDATE SET compactions = context_stats.compactions + 1,
              saved_by_compaction_bytes = context_stats.saved_by_compaction_bytes + excluded.saved_by_compaction_bytes,
              updated_at_ms = excluded.updated_at_ms`
        ),
      recordDuplicate: (sessionId: string, originalBytes: number, referenceBytes: number) =>
        write(
          "kern.tools.ContextStats.recordDuplicate",
          (now) =>
            sql`INSERT INTO context_stats (session_id, duplicates, saved_by_duplicates_bytes, updated_at_ms)
            VALUES (${sessionId}, 1, ${Math.max(0, originalBytes - referenceBytes)}, ${now})
            ON CONFLICT (session_id) DO UPDATE SET duplicates = context_stats.duplicates + 1,
              saved_by_duplicates_bytes = context_stats.saved_by_duplicates_bytes + excluded.saved_by_duplicates_bytes,
              updated_at_ms = excluded.updated_at_ms`
        ),
      get: (sessionId: string) =>
        row(sessionId).pipe(
          Effect.map(Option.getOrElse(() => zero)),
          Effect.mapError(failed("read")),
          Effect.withSpan("kern.tools.ContextStats.get")
        )
    } as const
  })
}) {}
