import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as KnownSecrets from "../../src/config/KnownSecrets.js"
import * as EventLog from "../../src/kernel/EventLog.js"
import * as Database from "../../src/storage/Database.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { readUnread, readUnreadBatch } from "../../src/kernel/auditJournal.js"
import { makeTempDir } from "../support/tempDir.js"

/** A journal file holding `text`. */
const journal = (text: string) => {
  const path = NodePath.join(makeTempDir(), "1-0-00-m00000000.jsonl")
  NodeFs.writeFileSync(path, text)
  return path
}

/** What the line-by-line read gives, as the batch should: its lines' values, and where it ends. */
const byLine = (path: string, offset: number) => {
  const unread = readUnread(path, offset)
  return { values: unread.lines.map((line) => JSON.parse(line.text)), end: unread.end, size: unread.size }
}

const asRead = (path: string, offset: number) => {
  const read = readUnreadBatch(path, offset)
  if (read === undefined) return undefined
  return { values: read.batch === undefined ? [] : JSON.parse(read.batch.toString("utf8")), end: read.end, size: read.size }
}

describe("an event log's own journal read as one batch", () => {
  it("is the JSON array of the whole lines past the offset, the torn last one left for later, as read line by line", () => {
    const lines = [[1, "a", "é ✓ \"quoted\"", null], [2, "b", "\\n", 0.5], [3, "c", "x", null]].map((values) => JSON.stringify(values))
    const path = journal(`${lines.join("\n")}\n[4, "tor`)
    const bytes = lines.map((line) => Buffer.byteLength(line) + 1)
    for (const offset of [0, bytes[0]!, bytes[0]! + bytes[1]!]) {
      expect(asRead(path, offset)).toEqual(byLine(path, offset))
    }
    expect(asRead(path, 0)?.values).toHaveLength(3)
    // Nothing whole past the offset: no batch, the offset unchanged.
    const end = byLine(path, 0).end
    expect(asRead(path, end)).toEqual({ values: [], end, size: byLine(path, 0).size })
  })

  it("takes about a MiB a read, and a line longer than that whole", () => {
    const line = JSON.stringify([1, "x".repeat(1000)])
    const many = journal(`${line}\n`.repeat(3000))
    const first = asRead(many, 0)
    expect(first).toEqual(byLine(many, 0))
    expect(first!.values.length).toBeGreaterThan(1000)
    expect(first!.values.length).toBeLessThan(3000)
    expect(asRead(many, first!.end)).toEqual(byLine(many, first!.end))

    const long = journal(`${JSON.stringify([1, "y".repeat(3 << 20)])}\n${line}\n`)
    expect(asRead(long, 0)).toEqual(byLine(long, 0))
    expect(asRead(long, 0)!.values).toHaveLength(2)
  })

  it("leaves a journal with an empty line to the line-by-line read", () => {
    expect(readUnreadBatch(journal(`[1]\n\n[2]\n`), 0)).toBeUndefined()
    expect(readUnreadBatch(journal(`\n[1]\n`), 0)).toBeUndefined()
  })
})

describe("a batch into kern.db", () => {
  // The insert takes the batch's rows as jsonb_each gives them, with no ORDER BY (a sort of every batch cost more
  // than it did): event ids must still follow the order events were recorded in, from a journal and from memory.
  for (const [where, filename] of [["on disk (its journal)", "file"], ["in memory (no journal)", ":memory:"]] as const) {
    it.scoped(`keeps the order events were recorded in: ${where}`, () =>
      Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const sql = yield* SqlClient.SqlClient
        const count = 3000
        // Events that differ in a column of their own (their retries), then runs of events that differ only in their
        // latency (a run's calls of one tool: the rows the log binds from memory share their other values).
        const retries = (i: number) => (i < count / 2 ? i : count + Math.floor(i / 100))
        for (let i = 0; i < count; i++) {
          yield* log.record({ decisionKey: "kernel.tool.dispatch", runId: "run", traceId: "trace", status: "ok", retries: retries(i), latencyMs: i })
        }
        yield* log.flush
        const rows = yield* sql<{ readonly retries: number; readonly latency: number }>`SELECT retries, latency_ms AS latency FROM kernel_events ORDER BY event_id`
        expect(rows.map((row) => [row.retries, row.latency])).toEqual(Array.from({ length: count }, (_, i) => [retries(i), i]))
      }).pipe(Effect.provide(EventLog.layerSql.pipe(Layer.provideMerge(Layer.merge(
        Database.layer({ filename: filename === "file" ? NodePath.join(makeTempDir(), ".kern", "kern.db") : filename }),
        KnownSecrets.layerNone
      ))))))
  }
})
