import { transaction } from "../storage/transaction.js"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { ContextCut, type NewSegment, Segment, SegmentStoreError } from "./Segment.js"
import { SegmentStore, type SegmentStoreShape } from "./SegmentStore.js"
import { SummarizerHealth } from "./summarizerHealth.js"
import { keptSpan } from "../kernel/keptSpan.js"

// Columns are aliased to the schemas' field names in the SQL itself and written with explicit column lists, so the
// store reads and writes the same whether or not the SqlClient transforms names.

const segmentColumns = `id, session_id AS "sessionId", level, start_idx AS "start", end_idx AS "end", tokens,
  first_at AS "firstAt", last_at AS "lastAt", summary, summary_tokens AS "summaryTokens", parent_id AS "parentId"`

const decodeSegments = Schema.decodeUnknown(Schema.Array(Segment))
const decodeCuts = Schema.decodeUnknown(Schema.Array(ContextCut))
const decodeIds = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.Number })))
const decodeRatios = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ratio: Schema.Number })))
const decodeHealth = Schema.decodeUnknown(Schema.Array(SummarizerHealth))

/**
 * The error's message and, for an SqlError, the database's own words (its message alone is "Failed to execute
 * statement").
 */
const describe = (error: { readonly message: string; readonly cause?: unknown }): string =>
  error.cause instanceof Error && error.cause.message !== error.message ? `${error.message}: ${error.cause.message}` : error.message

const failed = (what: string) => (error: { readonly message: string; readonly cause?: unknown }) =>
  new SegmentStoreError({ message: `could not ${what} in kern.db: ${describe(error)}` })

/** Why `childIds` cannot be rolled up under a parent of `parent.level`, if they cannot. */
const rollupProblem = (
  sessionId: string,
  parent: NewSegment,
  childIds: ReadonlyArray<number>,
  children: ReadonlyArray<Segment>
): string | undefined => {
  if (childIds.length === 0) return "a parent needs at least one child"
  if (new Set(childIds).size !== childIds.length) return `the child ids repeat (${childIds.join(", ")})`
  if (parent.level < 1) return `a parent is level 1 or above, not ${parent.level}`
  const missing = childIds.filter((id) => !children.some((child) => child.id === id))
  if (missing.length > 0) return `no segment ${missing.join(", ")} in session ${sessionId}`
  for (const child of children) {
    if (child.level !== parent.level - 1) {
      return `segment ${child.id} is level ${child.level}, not ${parent.level - 1} (one below the parent)`
    }
    if (child.parentId !== null) return `segment ${child.id} is already rolled up under segment ${child.parentId}`
  }
  const ordered = [...children].sort((a, b) => a.start - b.start)
  for (let i = 1; i < ordered.length; i++) {
    const before = ordered[i - 1]!
    const child = ordered[i]!
    if (child.start !== before.end) {
      return `segments ${before.id} (messages ${before.start}–${before.end - 1}) and ${child.id} (${child.start}–${child.end - 1}) ` +
        "are not contiguous"
    }
  }
  const first = ordered[0]!
  const last = ordered[ordered.length - 1]!
  if (parent.start !== first.start || parent.end !== last.end) {
    return `the parent spans messages ${parent.start}–${parent.end - 1} but its children span ${first.start}–${last.end - 1}`
  }
  return undefined
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = (sessionId: string, segment: NewSegment, createdAtMs: number) =>
    Effect.gen(function*() {
      const rows = yield* sql`INSERT INTO context_segments
        (session_id, level, start_idx, end_idx, tokens, first_at, last_at, summary, summary_tokens, parent_id, created_at_ms)
        VALUES (${sessionId}, ${segment.level}, ${segment.start}, ${segment.end}, ${segment.tokens}, ${segment.firstAt},
          ${segment.lastAt}, ${segment.summary}, ${segment.summaryTokens}, NULL, ${createdAtMs})
        RETURNING id`
      const [row] = yield* decodeIds(rows)
      if (row === undefined) return yield* new SegmentStoreError({ message: "kern.db did not return the id of a stored segment" })
      return new Segment({ ...segment, id: row.id, sessionId, parentId: null })
    })

  // Each session's segments as last read, kept until this store writes any segment: the segment pass lists them
  // after every turn (from SQL and decoded, each time), and while an agent runs only its own store writes its
  // segments (`kern segments rebuild` waits for the agent to stop). The agent's runtime builds this store beside
  // ContextWindow, which holds the segments in memory on the same terms and for as long; a store made for one read
  // (status, doctor) keeps nothing past it. `writes` moves when a write begins and when it ends, so a read that
  // overlapped a write is answered but not kept.
  const kept = new Map<string, ReadonlyArray<Segment>>()
  let writes = 0
  const written = () => {
    kept.clear()
    writes++
  }
  const writing = <A, E, R>(write: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      written()
      return Effect.ensuring(write, Effect.sync(written))
    })

  const read = (sessionId: string) =>
    sql`SELECT ${sql.literal(segmentColumns)} FROM context_segments WHERE session_id = ${sessionId}
      ORDER BY level, start_idx, id`.pipe(
      Effect.flatMap(decodeSegments),
      Effect.mapError(failed(`read the segments of session ${sessionId}`)),
      keptSpan("kern.context.segments.list", { attributes: { sessionId } })
    )

  const list: SegmentStoreShape["list"] = (sessionId) =>
    Effect.suspend(() => {
      const held = kept.get(sessionId)
      if (held !== undefined) return Effect.succeed(held)
      const before = writes
      return Effect.tap(read(sessionId), (segments) => {
        if (writes === before) kept.set(sessionId, segments)
      })
    })

  const insert: SegmentStoreShape["insert"] = (sessionId, segments) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      return yield* Effect.forEach(segments, (segment) => insertRow(sessionId, segment, now))
    }).pipe(
      transaction(sql),
      Effect.mapError(failed(`store ${segments.length} new segments of session ${sessionId}`)),
      Effect.withSpan("kern.context.segments.insert", { attributes: { sessionId, count: segments.length } }),
      writing
    )

  const insertParent: SegmentStoreShape["insertParent"] = (sessionId, parent, childIds) =>
    Effect.gen(function*() {
      const children = childIds.length === 0 ? [] : yield* sql`SELECT ${sql.literal(segmentColumns)} FROM context_segments
        WHERE session_id = ${sessionId} AND id IN ${sql.in(childIds)}`.pipe(Effect.flatMap(decodeSegments))
      const problem = rollupProblem(sessionId, parent, childIds, children)
      if (problem !== undefined) {
        return yield* new SegmentStoreError({
          message: `cannot roll up segments [${childIds.join(", ")}] into a level ${parent.level} segment: ${problem}`
        })
      }
      const now = yield* Clock.currentTimeMillis
      const stored = yield* insertRow(sessionId, parent, now)
      yield* sql`UPDATE context_segments SET parent_id = ${stored.id} WHERE id IN ${sql.in(childIds)}`
      return stored
    }).pipe(
      transaction(sql),
      Effect.mapError((error) =>
        error._tag === "SegmentStoreError" ? error : failed(`store a level ${parent.level} segment of session ${sessionId}`)(error)
      ),
      Effect.withSpan("kern.context.segments.insertParent", { attributes: { sessionId, level: parent.level } }),
      writing
    )

  const setSummary: SegmentStoreShape["setSummary"] = (id, summary, summaryTokens) =>
    Effect.gen(function*() {
      // An empty summary would read as "summarized" and hide the segment from every retry.
      if (summary.trim() === "") {
        return yield* new SegmentStoreError({ message: `segment ${id}: an empty summary is not stored (it is retried instead)` })
      }
      const rows = yield* sql`UPDATE context_segments SET summary = ${summary}, summary_tokens = ${summaryTokens}
        WHERE id = ${id} RETURNING id`.pipe(Effect.flatMap(decodeIds), Effect.mapError(failed(`store the summary of segment ${id}`)))
      if (rows.length === 0) {
        return yield* new SegmentStoreError({
          message: `segment ${id} is no longer in kern.db (were the segments rebuilt meanwhile?): its summary is not stored`
        })
      }
    }).pipe(Effect.withSpan("kern.context.segments.setSummary", { attributes: { id } }), writing)

  const clear: SegmentStoreShape["clear"] = (sessionId) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM context_segments WHERE session_id = ${sessionId}`
      yield* sql`DELETE FROM context_cuts WHERE session_id = ${sessionId}`
    }).pipe(
      transaction(sql),
      Effect.mapError(failed(`forget the segments and cut of session ${sessionId}`)),
      Effect.withSpan("kern.context.segments.clear", { attributes: { sessionId } }),
      writing
    )

  const getCut: SegmentStoreShape["getCut"] = (sessionId) =>
    sql`SELECT session_id AS "sessionId", message_index AS "messageIndex", byte_offset AS "byteOffset",
      lines_before AS "linesBefore", at, raw_start AS "rawStart" FROM context_cuts WHERE session_id = ${sessionId}`.pipe(
      Effect.flatMap(decodeCuts),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.mapError(failed(`read the context cut of session ${sessionId}`)),
      Effect.withSpan("kern.context.segments.getCut", { attributes: { sessionId } })
    )

  const setCut: SegmentStoreShape["setCut"] = (cut) =>
    sql`INSERT INTO context_cuts (session_id, message_index, byte_offset, lines_before, at, raw_start)
      VALUES (${cut.sessionId}, ${cut.messageIndex}, ${cut.byteOffset}, ${cut.linesBefore}, ${cut.at}, ${cut.rawStart ?? null})
      ON CONFLICT (session_id) DO UPDATE SET message_index = excluded.message_index, byte_offset = excluded.byte_offset,
        lines_before = excluded.lines_before, at = excluded.at, raw_start = excluded.raw_start`.pipe(
      Effect.asVoid,
      Effect.mapError(failed(`store the context cut of session ${cut.sessionId}`)),
      Effect.withSpan("kern.context.segments.setCut", { attributes: { sessionId: cut.sessionId, messageIndex: cut.messageIndex } })
    )

  const getCalibration: SegmentStoreShape["getCalibration"] = (model) =>
    sql`SELECT ratio FROM context_calibration WHERE model = ${model}`.pipe(
      Effect.flatMap(decodeRatios),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.ratio)),
      Effect.mapError(failed(`read the token calibration of model ${model}`)),
      Effect.withSpan("kern.context.segments.getCalibration", { attributes: { model } })
    )

  const setCalibration: SegmentStoreShape["setCalibration"] = (model, ratio) =>
    Effect.gen(function*() {
      if (!Number.isFinite(ratio) || ratio <= 0) {
        return yield* new SegmentStoreError({ message: `model ${model}: a token calibration is a positive number, not ${ratio}` })
      }
      yield* sql`INSERT INTO context_calibration (model, ratio) VALUES (${model}, ${ratio})
        ON CONFLICT (model) DO UPDATE SET ratio = excluded.ratio`.pipe(
        Effect.mapError(failed(`store the token calibration of model ${model}`))
      )
    }).pipe(Effect.withSpan("kern.context.segments.setCalibration", { attributes: { model } }))

  const getHealth: SegmentStoreShape["getHealth"] = sql`SELECT summarizer, consecutive_failures AS "consecutiveFailures",
    last_error AS "lastError", last_failure_at_ms AS "lastFailureAtMs", last_success_at_ms AS "lastSuccessAtMs",
    next_attempt_at_ms AS "nextAttemptAtMs" FROM context_summarizer WHERE id = 1`.pipe(
    Effect.flatMap(decodeHealth),
    Effect.map((rows) => Option.fromNullable(rows[0])),
    Effect.mapError(failed("read the summary model's health")),
    Effect.withSpan("kern.context.summarizer.getHealth")
  )

  const setHealth: SegmentStoreShape["setHealth"] = (health) =>
    sql`INSERT INTO context_summarizer
      (id, summarizer, consecutive_failures, last_error, last_failure_at_ms, last_success_at_ms, next_attempt_at_ms)
      VALUES (1, ${health.summarizer}, ${health.consecutiveFailures}, ${health.lastError}, ${health.lastFailureAtMs}, ${health.lastSuccessAtMs},
        ${health.nextAttemptAtMs})
      ON CONFLICT (id) DO UPDATE SET summarizer = excluded.summarizer, consecutive_failures = excluded.consecutive_failures,
        last_error = excluded.last_error, last_failure_at_ms = excluded.last_failure_at_ms,
        last_success_at_ms = excluded.last_success_at_ms, next_attempt_at_ms = excluded.next_attempt_at_ms`.pipe(
      Effect.asVoid,
      Effect.mapError(failed("store the summary model's health")),
      Effect.withSpan("kern.context.summarizer.setHealth", { attributes: { failures: health.consecutiveFailures } })
    )

  return SegmentStore.of({
    list,
    insert,
    insertParent,
    setSummary,
    clear,
    getCut,
    setCut,
    getCalibration,
    setCalibration,
    getHealth,
    setHealth
  })
})

/**
 * The segment tree, cuts and calibrations in kern.db (migration 0700_context), the summarizer's health (0850); the same
 * SQL on SQLite and PostgreSQL (test/context/SegmentStore.test.ts runs on both).
 */
export const layer: Layer.Layer<SegmentStore, never, SqlClient.SqlClient> = Layer.effect(SegmentStore, make)
