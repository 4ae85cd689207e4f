import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { ContextCut, type NewSegment, type Segment, SegmentStoreError } from "../../src/context/Segment.js"
import { SegmentStore } from "../../src/context/SegmentStore.js"
import { healthyFor, SummarizerHealth } from "../../src/context/summarizerHealth.js"
import * as SegmentStoreSql from "../../src/context/SegmentStoreSql.js"
import type { DatabaseError } from "../../src/storage/Database.js"
import { databases, reopenable } from "../support/databases.js"
import { recordingTracer } from "../support/recordingTracer.js"

/** The store over a kern.db, with the SqlClient beside it for what a test does to the tables. */
const withStore = <A, E>(
  database: Layer.Layer<SqlClient.SqlClient, DatabaseError>,
  body: (store: SegmentStore["Type"], sql: SqlClient.SqlClient) => Effect.Effect<A, E>
) =>
  Effect.flatMap(Effect.all([SegmentStore, SqlClient.SqlClient]), ([store, sql]) => body(store, sql)).pipe(
    Effect.provide(SegmentStoreSql.layer.pipe(Layer.provideMerge(database)))
  )

const l0 = (start: number, end: number, summary: string | null = null): NewSegment => ({
  level: 0,
  start,
  end,
  tokens: (end - start) * 1_000,
  firstAt: `2026-01-01T00:00:${String(start % 60).padStart(2, "0")}.000Z`,
  lastAt: `2026-01-01T00:01:${String((end - 1) % 60).padStart(2, "0")}.000Z`,
  summary,
  summaryTokens: summary === null ? 0 : 50
})

const parentOver = (level: number, children: ReadonlyArray<Segment>): NewSegment => ({
  level,
  start: children[0]!.start,
  end: children[children.length - 1]!.end,
  tokens: children.reduce((sum, child) => sum + child.tokens, 0),
  firstAt: children[0]!.firstAt,
  lastAt: children[children.length - 1]!.lastAt,
  summary: null,
  summaryTokens: 0
})

/** Ten contiguous summarized L0 segments of 12 messages each. */
const tenL0 = Array.from({ length: 10 }, (_, i) => l0(i * 12, (i + 1) * 12, `summary ${i}`))

const failureOf = <A>(effect: Effect.Effect<A, SegmentStoreError>) =>
  Effect.map(Effect.either(effect), (result) => {
    assert.isTrue(Either.isLeft(result), "expected a SegmentStoreError")
    const error = Either.getLeft(result).pipe(Option.getOrThrow)
    assert.instanceOf(error, SegmentStoreError)
    return error.message
  })

describe.each(databases)("the segment store on $dialect", (database) => {
  const dbFile = () => database.layer

  it.effect("insert answers the segments with ids in order; list orders by level then start and keeps every field", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(1_700_000_000_000)
        const stored = yield* store.insert("s1", [l0(30, 45), l0(0, 12, "first"), l0(12, 30)])
        assert.deepStrictEqual(stored.map((s) => [s.start, s.end]), [[30, 45], [0, 12], [12, 30]])
        assert.strictEqual(new Set(stored.map((s) => s.id)).size, 3)
        yield* store.insert("other", [l0(0, 5)])
        const listed = yield* store.list("s1")
        assert.deepStrictEqual(listed.map((s) => [s.level, s.start, s.end]), [[0, 0, 12], [0, 12, 30], [0, 30, 45]])
        const first = listed[0]!
        assert.deepStrictEqual(
          { ...first },
          {
            id: stored[1]!.id,
            sessionId: "s1",
            level: 0,
            start: 0,
            end: 12,
            tokens: 12_000,
            firstAt: "2026-01-01T00:00:00.000Z",
            lastAt: "2026-01-01T00:01:11.000Z",
            summary: "first",
            summaryTokens: 50,
            parentId: null
          }
        )
        assert.deepStrictEqual({ ...stored[1]! }, { ...first })
        assert.isNull(listed[1]!.summary)
        assert.deepStrictEqual(yield* store.list("nobody"), [])
      })))

  it.effect("created_at_ms comes from the Clock", () =>
    withStore(dbFile(), (store, sql) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(1_234_567)
        yield* store.insert("s1", [l0(0, 10)])
        const rows = yield* sql<{ readonly createdAtMs: number }>`SELECT created_at_ms FROM context_segments`
        assert.deepStrictEqual(rows.map((row) => row.createdAtMs), [1_234_567])
      })))

  it.effect("insert is one transaction: a segment that cannot be stored leaves none of the batch", () =>
    withStore(dbFile(), (store, sql) =>
      Effect.gen(function*() {
        yield* sql.onDialectOrElse({
          pg: () => sql`ALTER TABLE context_segments ADD CONSTRAINT refused_by_the_test CHECK (start_idx <> 999)`,
          orElse: () =>
            sql`CREATE TRIGGER refuse_999 BEFORE INSERT ON context_segments WHEN NEW.start_idx = 999
              BEGIN SELECT RAISE(ABORT, 'refused_by_the_test'); END`
        })
        const message = yield* failureOf(store.insert("s1", [l0(0, 10), l0(10, 20), l0(999, 1_000)]))
        assert.include(message, "could not store 3 new segments of session s1 in kern.db")
        assert.include(message, "refused_by_the_test")
        assert.deepStrictEqual(yield* store.list("s1"), [])
      })))

  it.effect("insertParent stores the parent and points each child at it", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        const children = yield* store.insert("s1", tenL0)
        const parent = yield* store.insertParent("s1", parentOver(1, children), children.map((c) => c.id))
        assert.deepStrictEqual([parent.level, parent.start, parent.end, parent.tokens], [1, 0, 120, 120_000])
        assert.strictEqual(parent.firstAt, children[0]!.firstAt)
        assert.strictEqual(parent.lastAt, children[9]!.lastAt)
        assert.isNull(parent.parentId)
        const listed = yield* store.list("s1")
        assert.deepStrictEqual(listed.map((s) => s.level), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
        for (const child of listed.filter((s) => s.level === 0)) assert.strictEqual(child.parentId, parent.id)
        assert.deepStrictEqual({ ...listed[10]! }, { ...parent })
      })))

  it.effect("insertParent refuses children that are not contiguous roots one level below, and changes nothing", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        const children = yield* store.insert("s1", tenL0)
        const ids = children.map((c) => c.id)
        const [elsewhere] = yield* store.insert("s2", [l0(200, 210)])
        const cases: ReadonlyArray<[string, Effect.Effect<Segment, SegmentStoreError>]> = [
          ["not contiguous", store.insertParent("s1", parentOver(1, children), [ids[0]!, ids[1]!, ids[3]!])],
          [`segment ${ids[0]} is level 0, not 1`, store.insertParent("s1", parentOver(2, children), ids)],
          [`no segment ${elsewhere!.id} in session s1`, store.insertParent("s1", parentOver(1, children), [...ids, elsewhere!.id])],
          ["no segment 987654 in session s1", store.insertParent("s1", parentOver(1, children), [987_654])],
          ["the child ids repeat", store.insertParent("s1", parentOver(1, children), [ids[0]!, ids[0]!])],
          ["at least one child", store.insertParent("s1", parentOver(1, children), [])],
          ["the parent spans messages 0–119 but its children span 0–23", store.insertParent("s1", parentOver(1, children), ids.slice(0, 2))],
          ["level 1 or above, not 0", store.insertParent("s1", parentOver(0, children), ids)]
        ]
        for (const [expected, attempt] of cases) {
          const message = yield* failureOf(attempt)
          assert.include(message, expected)
          assert.include(message, "cannot roll up segments")
        }
        const listed = yield* store.list("s1")
        assert.strictEqual(listed.length, 10)
        assert.isTrue(listed.every((s) => s.parentId === null))
      })))

  it.effect("insertParent refuses a child that already has a parent", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        const children = yield* store.insert("s1", tenL0)
        const ids = children.map((c) => c.id)
        const parent = yield* store.insertParent("s1", parentOver(1, children), ids)
        const message = yield* failureOf(store.insertParent("s1", parentOver(1, children), ids))
        assert.include(message, `segment ${ids[0]} is already rolled up under segment ${parent.id}`)
        assert.strictEqual((yield* store.list("s1")).filter((s) => s.level === 1).length, 1)
      })))

  it.effect("setSummary writes a summary; an unknown segment or an empty summary is refused", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        const [segment] = yield* store.insert("s1", [l0(0, 10)])
        yield* store.setSummary(segment!.id, "They set up the repo.", 6)
        const [after] = yield* store.list("s1")
        assert.strictEqual(after!.summary, "They set up the repo.")
        assert.strictEqual(after!.summaryTokens, 6)
        assert.include(yield* failureOf(store.setSummary(424_242, "x", 1)), "segment 424242 is no longer in kern.db")
        assert.include(yield* failureOf(store.setSummary(segment!.id, "  \n", 0)), "an empty summary is not stored")
        assert.strictEqual((yield* store.list("s1"))[0]!.summary, "They set up the repo.")
      })))

  it.effect("clear forgets one session's segments and cut, and no other session's", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        const children = yield* store.insert("s1", tenL0)
        yield* store.insertParent("s1", parentOver(1, children), children.map((c) => c.id))
        yield* store.insert("s2", [l0(0, 10)])
        const cut = (sessionId: string) => new ContextCut({ sessionId, messageIndex: 12, byteOffset: 3_400, linesBefore: 12, at: "t" })
        yield* store.setCut(cut("s1"))
        yield* store.setCut(cut("s2"))
        yield* store.clear("s1")
        assert.deepStrictEqual(yield* store.list("s1"), [])
        assert.isTrue(Option.isNone(yield* store.getCut("s1")))
        assert.strictEqual((yield* store.list("s2")).length, 1)
        assert.isTrue(Option.isSome(yield* store.getCut("s2")))
      })))

  it.scoped("the cut and the calibration are upserted, and survive reopening kern.db", () =>
    Effect.gen(function*() {
      const file = yield* reopenable(database)
      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          assert.isTrue(Option.isNone(yield* store.getCut("s1")))
          assert.isTrue(Option.isNone(yield* store.getCalibration("anthropic/claude")))
          yield* store.setCut(new ContextCut({ sessionId: "s1", messageIndex: 40, byteOffset: 9_000, linesBefore: 40, at: "a" }))
          yield* store.setCut(new ContextCut({ sessionId: "s1", messageIndex: 120, byteOffset: 31_337, linesBefore: 121, at: "b" }))
          yield* store.setCalibration("anthropic/claude", 1.2)
          yield* store.setCalibration("anthropic/claude", 1.15)
          yield* store.setCalibration("gpt", 1)
        }))
      // A second database layer over the same file: what a restarted kern sees.
      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const cut = Option.getOrThrow(yield* store.getCut("s1"))
          assert.deepStrictEqual({ ...cut }, { sessionId: "s1", messageIndex: 120, byteOffset: 31_337, linesBefore: 121, at: "b" })
          assert.deepStrictEqual(yield* store.getCalibration("anthropic/claude"), Option.some(1.15))
          assert.deepStrictEqual(yield* store.getCalibration("gpt"), Option.some(1))
        }))
    }))

  it.effect("the summary model's health is one row, replaced whole, its nulls kept", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        assert.isTrue(Option.isNone(yield* store.getHealth))
        const failing = new SummarizerHealth({
          summarizer: "openrouter  cheap-model",
          consecutiveFailures: 3,
          lastError: "HTTP 429: slow down",
          lastFailureAtMs: 1_795_000_000_123,
          lastSuccessAtMs: null,
          nextAttemptAtMs: 1_795_000_060_123
        })
        yield* store.setHealth(failing)
        assert.deepStrictEqual(yield* store.getHealth, Option.some(failing))
        yield* store.setHealth(healthyFor("openrouter  cheap-model", 1_795_000_100_000))
        assert.deepStrictEqual(yield* store.getHealth, Option.some(healthyFor("openrouter  cheap-model", 1_795_000_100_000)))
      })))

  it.effect("a calibration that is not a positive number is refused", () =>
    withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        for (const ratio of [Number.NaN, 0, -1, Number.POSITIVE_INFINITY]) {
          assert.include(yield* failureOf(store.setCalibration("m", ratio)), "a token calibration is a positive number")
        }
        assert.isTrue(Option.isNone(yield* store.getCalibration("m")))
      })))

  it.effect("list keeps a session's segments until the store writes: each write is in the next list, a row put in beside the store is not", () =>
    withStore(dbFile(), (store, sql) =>
      Effect.gen(function*() {
        const startsAndSummaries = (segments: ReadonlyArray<Segment>) => segments.map((s) => [s.level, s.start, s.summary])
        const [first] = yield* store.insert("s1", [l0(0, 12)])
        assert.deepStrictEqual(startsAndSummaries(yield* store.list("s1")), [[0, 0, null]])
        // Only the store writes a running agent's segments: a row put in beside it is read once the store writes.
        yield* sql`INSERT INTO context_segments
          (session_id, level, start_idx, end_idx, tokens, first_at, last_at, summary, summary_tokens, parent_id, created_at_ms)
          VALUES ('s1', 0, 100, 110, 1, 'a', 'b', NULL, 0, NULL, 1)`
        assert.deepStrictEqual(startsAndSummaries(yield* store.list("s1")), [[0, 0, null]])
        yield* store.setSummary(first!.id, "first", 3)
        assert.deepStrictEqual(startsAndSummaries(yield* store.list("s1")), [[0, 0, "first"], [0, 100, null]])
        const [second] = yield* store.insert("s1", [l0(12, 24, "second")])
        const listed = yield* store.list("s1")
        assert.deepStrictEqual(startsAndSummaries(listed), [[0, 0, "first"], [0, 12, "second"], [0, 100, null]])
        const children = listed.filter((s) => s.id === first!.id || s.id === second!.id)
        const parent = yield* store.insertParent("s1", parentOver(1, children), children.map((c) => c.id))
        const rolled = yield* store.list("s1")
        assert.deepStrictEqual(rolled.map((s) => [s.level, s.start, s.parentId]), [
          [0, 0, parent.id],
          [0, 12, parent.id],
          [0, 100, null],
          [1, 0, null]
        ])
        // Another session's write is in its next list too.
        yield* store.list("s2")
        yield* store.insert("s2", [l0(0, 5)])
        assert.deepStrictEqual(startsAndSummaries(yield* store.list("s2")), [[0, 0, null]])
        yield* store.clear("s1")
        assert.deepStrictEqual(yield* store.list("s1"), [])
      })))

  it.effect("database failures and rows that do not decode are SegmentStoreErrors naming what failed", () =>
    withStore(dbFile(), (store, sql) =>
      Effect.gen(function*() {
        yield* store.insert("s1", [l0(0, 10)])
        // A column that no longer holds a number, as a hand edit or a foreign writer could leave it.
        yield* sql.onDialectOrElse({ pg: () => sql`ALTER TABLE context_segments ALTER COLUMN level TYPE TEXT`, orElse: () => Effect.void })
        yield* sql`UPDATE context_segments SET level = 'high'`
        const undecodable = yield* failureOf(store.list("s1"))
        assert.include(undecodable, "could not read the segments of session s1 in kern.db")
        assert.include(undecodable, "level")
        yield* sql`DROP TABLE context_cuts`
        const missing = yield* failureOf(store.getCut("s1"))
        assert.include(missing, "could not read the context cut of session s1 in kern.db")
        assert.include(missing, "context_cuts")
      })))

  it.effect("every operation has its span", () => {
    const { spans, tracer } = recordingTracer()
    return withStore(dbFile(), (store) =>
      Effect.gen(function*() {
        const children = yield* store.insert("s1", tenL0)
        yield* store.insertParent("s1", parentOver(1, children), children.map((c) => c.id))
        yield* store.setSummary(children[0]!.id, "x", 1)
        yield* store.list("s1")
        yield* store.setCut(new ContextCut({ sessionId: "s1", messageIndex: 1, byteOffset: 1, linesBefore: 1, at: "a" }))
        yield* store.getCut("s1")
        yield* store.setCalibration("m", 1.1)
        yield* store.getCalibration("m")
        yield* store.clear("s1")
        const names = new Set(spans.map((span) => span.name))
        for (const op of ["insert", "insertParent", "setSummary", "list", "setCut", "getCut", "setCalibration", "getCalibration", "clear"]) {
          assert.isTrue(names.has(`kern.context.segments.${op}`), `no span kern.context.segments.${op}`)
        }
      })).pipe(Effect.withTracer(tracer))
  })
})
