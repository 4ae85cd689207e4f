import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as NodePath from "node:path"
import { RecallStore } from "../../src/recall/RecallStore.js"
import * as RecallStoreSqlite from "../../src/recall/RecallStoreSqlite.js"
import {
  chunkRowCheck,
  ChunkRowSchema,
  decoded,
  decodedChecked,
  RankedRow,
  rankedRowCheck
} from "../../src/recall/storeRows.js"
import * as Database from "../../src/storage/Database.js"
import { makeTempDir } from "../support/tempDir.js"

const chunk = {
  id: 7,
  source: "session",
  sessionId: "20260101-100000-000-aaaa",
  path: null,
  messageStart: 3,
  messageEnd: 4,
  startMs: 1_767_261_600_000,
  endMs: 1_767_261_601_000,
  text: "the printer jams"
}

/** Rows of every form a store could meet: kern's own, PostgreSQL's (64-bit integers as strings), and broken ones. */
const chunkRows: ReadonlyArray<unknown> = [
  chunk,
  { ...chunk, source: "file", sessionId: null, path: "notes/2026-01-01.md" },
  { ...chunk, embedded: 1 },
  { ...chunk, id: Number.NaN, text: "" },
  { ...chunk, text: "\"; DROP TABLE recall_chunks; --\u0000 \u202e" },
  { ...chunk, id: "7", startMs: "1767261600000" },
  { ...chunk, id: "seven" },
  { ...chunk, source: "web" },
  { ...chunk, text: null },
  { ...chunk, sessionId: 5 },
  { ...chunk, path: undefined },
  (({ text: _text, ...rest }) => rest)(chunk),
  { ...chunk, messageEnd: 4n },
  Object.assign(Object.create(null) as object, chunk),
  Object.create(chunk) as unknown,
  [7, "session"],
  null,
  "row",
  42
]

const rankedRows: ReadonlyArray<unknown> = [
  { id: 1, score: -2.5 },
  { id: 2, score: 0, extra: "x" },
  { id: "3", score: -1 },
  { id: 4, score: "-1" },
  { id: 5 },
  { score: 1 },
  Object.create({ id: 6, score: 1 }) as unknown,
  undefined
]

const outcome = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runSync(Effect.either(Effect.mapError(effect, (error) => String(error))))

describe("rows read without a Schema decode per row", () => {
  it("give what the Schema gives for every list of rows: the same values, or the same error", () => {
    const cases = [
      { schema: ChunkRowSchema as Schema.Schema<unknown, any>, check: chunkRowCheck, rows: chunkRows },
      { schema: RankedRow as Schema.Schema<unknown, any>, check: rankedRowCheck, rows: rankedRows }
    ]
    let fast = 0
    let failures = 0
    for (const { check, rows, schema } of cases) {
      // Every row alone, every pair, and the whole list: a broken row anywhere makes the list the Schema's.
      const lists = [...rows.map((row) => [row]), ...rows.flatMap((a) => rows.map((b) => [a, b])), rows]
      for (const list of lists) {
        const slow = outcome(decoded(schema)(Effect.succeed(list)))
        const checked = outcome(decodedChecked(schema, check)(Effect.succeed(list)))
        expect(checked).toEqual(slow)
        if (list.every((row) => check(row) !== undefined)) fast++
        if (Either.isLeft(slow)) failures++
      }
    }
    // Both paths were taken: lists the check passed whole, and lists the Schema decoded or refused.
    expect(fast).toBeGreaterThan(10)
    expect(failures).toBeGreaterThan(10)
  })

  it("rows of PostgreSQL's form are decoded by the Schema (their integers are numbers), not passed on as strings", () => {
    const rows = outcome(decodedChecked(ChunkRowSchema, chunkRowCheck)(Effect.succeed([chunk, { ...chunk, id: "8" }])))
    expect(rows).toEqual(Either.right([chunk, { ...chunk, id: 8 }]))
    expect(chunkRowCheck({ ...chunk, id: "8" })).toBeUndefined()
  })

  it.live("the SQLite store's chunks and keyword hits are what the Schema decode of the same rows gives, by the check", () =>
    Effect.gen(function*() {
      const store = yield* RecallStore
      const sql = yield* SqlClient.SqlClient
      const texts = [
        "the printer in the office jams on thick paper",
        "winter tyres for the car; the printer again",
        "\"printer\" OR 1=1; -- \u0000 naïve café 😀 printer",
        "nothing to see here"
      ]
      yield* store.addSessionChunks("s1", 0, texts.map((text, i) => ({
        source: i === 3 ? "file" as const : "session" as const,
        sessionId: i === 3 ? null : "s1",
        path: i === 3 ? "notes/a.md" : null,
        messageStart: i,
        messageEnd: i + 1,
        startMs: 1_000 * i,
        endMs: 1_000 * i + 500,
        text
      })))
      const raw = yield* sql`SELECT * FROM recall_chunks ORDER BY id`
      expect(raw.length).toBe(4)
      // The check takes the store's own rows: the fast path is the one searches run.
      for (const row of raw) expect(chunkRowCheck(row)).toBeDefined()
      const bySchema = yield* decoded(ChunkRowSchema)(Effect.succeed(raw))
      const read = yield* store.chunks(bySchema.map((row) => row.id))
      expect([...read].sort((a, b) => a.id - b.id)).toEqual(bySchema)

      const window = { afterMs: undefined, beforeMs: undefined }
      const hits = yield* store.keywordSearch("printer paper", 10, window)
      const rawHits = yield* sql`SELECT rowid AS id, bm25(recall_fts) AS score FROM recall_fts
        WHERE recall_fts MATCH ${RecallStoreSqlite.ftsQuery("printer paper")!} ORDER BY score LIMIT 10`
      for (const row of rawHits) expect(rankedRowCheck(row)).toBeDefined()
      expect(hits).toEqual(yield* decoded(RankedRow)(Effect.succeed(rawHits)))
      expect(hits.length).toBe(3)
      const windowed = yield* store.keywordSearch("printer", 10, { afterMs: 900, beforeMs: undefined })
      expect(windowed.map((hit) => hit.id).sort()).toEqual(bySchema.slice(1, 3).map((row) => row.id))
    }).pipe(
      Effect.provide(RecallStoreSqlite.layer.pipe(Layer.provideMerge(
        Database.layer({ filename: NodePath.join(makeTempDir("kern-rows-"), "kern.db") })
      )))
    ))
})
